"""dlsuite: run DuckLake's own SQL logic tests with stock DuckDB against a DuckLake
catalog on PostgreSQL, on RockLake, or (a control run) on DuckDB files.

Modules, in the order a file goes through them:

* cli           command line, the whole run (``run.py`` is its entry point)
* discovery     the checkout and its test files
* config        the DuckDB test configuration (test/configs/postgres.json)
* backends      a fresh catalog per file: PostgreSQL database, RockLake server, DuckDB file
* orchestrator  one worker process per file, timeouts, scratch directories
* execute       inside the worker: running one file, record by record
* parser        reading records and directives from a test file
* substitution  keywords (${VAR}, __TEST_DIR__, {UUID}), loop variables, foreach groups
* commands      executable records: statements, queries, loops, restart, ...
* database      the DuckDB database and connections of one file, running SQL
* render        value rendering, sort modes, hashes, result comparison
* require       answers to ``require X``
* errors        how a file ends early (fail, skip, unsupported), error messages
* processes     child-process helpers
* report        progress lines, the summary and the JSON report
"""
