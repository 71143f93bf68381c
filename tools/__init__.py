"""Development tools: nothing here is imported by the site's runtime code."""
