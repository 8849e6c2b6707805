"""Persisted routing decisions and request logs; stores what it is handed, off the response path."""
