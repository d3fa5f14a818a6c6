import os

API_TOKEN = "ghp_Qw3rTy7uIo9pAs2dFg4hJk6lZx8cVb1nMm0q"
PASSWORD = os.environ.get("PASSWORD", "changeme")
url = "https://example.org/api"
