"""GitHub: the github3.py client, credentials, retries, the Actions environment and webhooks."""
