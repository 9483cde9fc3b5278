"""How results are written and read back: a run's table, CSV and JSON,
plain text tables, a results directory, PNG plots and the HTML page."""
