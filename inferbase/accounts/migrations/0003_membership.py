# Organization.members (many-to-many) becomes Membership: one organization per portal user, with a role.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def members_to_memberships(apps, schema_editor):
    """Give each former member a membership of the first organization it belonged to, as an analyst."""
    Organization = apps.get_model("accounts", "Organization")
    Membership = apps.get_model("accounts", "Membership")
    seen = set()
    for org in Organization.objects.order_by("id").prefetch_related("members"):
        for user in org.members.all():
            if user.pk not in seen:
                seen.add(user.pk)
                Membership.objects.create(user=user, organization=org, role="analyst")


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0002_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Membership',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('role', models.CharField(choices=[('admin', 'Admin'), ('analyst', 'Analyst')], default='analyst', max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='accounts.organization')),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='membership', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.RunPython(members_to_memberships, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='organization',
            name='members',
        ),
    ]
