"""The TPC-E-derived brokerage workload: customers trading securities through brokers, trade
results per second (``trps``) its headline. Its scale, reference data and row generators
here, its schema, loader, frames and checks in ``engines/<engine>/brokerage/``.

Results are TPC-E-derived: not comparable with audited TPC-E results, and never called tpsE.
"""
