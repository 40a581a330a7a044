"""The research interfaces' tests need their extras; the test command installs them
(scripts/bootstrap.sh), so here they are required, not skipped."""
