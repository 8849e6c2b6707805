# Logs in the portal: the columns it filters on, copied from the decision, and one index per selective filter.
# On PostgreSQL the indexes are built CONCURRENTLY, so a large request_log keeps taking writes meanwhile.

from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(migrations.AddIndex):
    """AddIndex, built without blocking writes where the database can (PostgreSQL)."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)


def _index(name, *fields):
    return AddIndexConcurrentlyOnPostgres(
        model_name="requestlog", index=models.Index(fields=["organization_id", *fields, "-created_at", "-id"], name=name))


class Migration(migrations.Migration):

    atomic = False  # CREATE INDEX CONCURRENTLY cannot run inside a transaction

    dependencies = [
        ('observability', '0001_initial'),
    ]

    operations = [
        migrations.AddField(model_name='requestlog', name='task',
                            field=models.CharField(blank=True, default='', max_length=32)),
        migrations.AddField(model_name='requestlog', name='complexity',
                            field=models.CharField(blank=True, default='', max_length=16)),
        migrations.AddField(model_name='requestlog', name='thinking',
                            field=models.CharField(blank=True, default='', help_text='on, off, or empty when not known',
                                                   max_length=8)),
        migrations.AddField(model_name='requestlog', name='cached_tokens', field=models.PositiveIntegerField(null=True)),
        migrations.AddField(model_name='requestlog', name='structured_output_repair', field=models.JSONField(null=True)),
        migrations.AddField(model_name='requestlog', name='requested', field=models.JSONField(
            default=dict, help_text='What the request asked of routing: its routing object, extended_thinking and '
                                    'max_tokens, as sent.')),
        _index('log_org_newest'),
        _index('log_org_project', 'project_id'),
        _index('log_org_key', 'api_key_id'),
        _index('log_org_model', 'model_served'),
        _index('log_org_task', 'task'),
        _index('log_org_disposition', 'final_disposition'),
        _index('log_org_status', 'status_code'),
        # The indexes the new ones make redundant go last, so the list is never left without one.
        migrations.RemoveIndex(model_name='requestlog', name='log_org_created'),
        migrations.AlterField(model_name='requestlog', name='organization_id', field=models.BigIntegerField(null=True)),
    ]
