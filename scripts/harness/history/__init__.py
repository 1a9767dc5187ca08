"""The multi-node history check (scripts/history.py, issue 14) in four parts:

    settings  its environment variables and constants, log()
    cluster   PostgreSQL, the TCP proxies, the nodes, HAProxy
    workload  the clients' operations, recorded as a history
    faults    kills, bypasses, partitions, the failover
    checker   pure functions over the recorded history (unit-tested in harness/tests)
"""
