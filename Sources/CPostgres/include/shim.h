// libpq (Debian libpq-dev) for the PostgreSQL store.
#ifndef FLOWSTACK_CPOSTGRES_SHIM_H
#define FLOWSTACK_CPOSTGRES_SHIM_H

#include <libpq-fe.h>

/// The SQLSTATE field code of PQresultErrorField (PG_DIAG_SQLSTATE is a character macro).
static inline int flowstack_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }

#endif
