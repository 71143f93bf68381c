"""Admin for the API's service tokens."""
