"""Where users run it: their own sessions, Spark Connect, a standalone cluster, S3, the command line, the README
tour."""
