-- The user's state an action was judged with, where a rebuild of the log could not derive it
-- (see LogSnapshots in Sources/FlowStore). PostgreSQL still writes each entry's tree, so every
-- entry is a snapshot and this column is written only as SQLite writes it, to keep the two
-- stores' logs alike. A nullable column without a default: added without rewriting the table.
ALTER TABLE actions ADD COLUMN user_state TEXT;
