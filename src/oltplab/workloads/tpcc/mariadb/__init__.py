"""The TPC-C-derived workload in MariaDB's dialect: load, procedures, consistency checks.

The SQL lives in ../sql/mariadb_*.sql; connections come from engines/mariadb/client.py.
"""
