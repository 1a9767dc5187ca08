#!/usr/bin/env python3
"""The command of the throwaway PostgreSQL (harness/postgres.py: its usage and the library).

    python3 scripts/pgserver.py start [--standby | --standbys N] [--dir D]
    python3 scripts/pgserver.py stop --dir D
    python3 scripts/pgserver.py kill9 [--group]|restart|promote|rejoin|status --dir D [--node NAME]
    python3 scripts/pgserver.py add-role --dir D --role R --password P
"""
import sys

from harness.postgres import main

if __name__ == "__main__":
    sys.exit(main())
