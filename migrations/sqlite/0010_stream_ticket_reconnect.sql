-- Stream tickets that a browser's EventSource can reconnect with. EventSource reconnects by
-- itself to the same URL after a dropped connection, so a ticket is no longer deleted when it
-- opens a stream: `expires_at` becomes the end of the window in which it may open one (30 s
-- for the first use; then the node holding its stream keeps it a short grace window ahead, and
-- moves it to that grace window after the stream ends), `ends_at` the absolute end of the
-- ticket whatever its streams do, and `generation` counts the streams it opened, so the node
-- of an older stream finds out that a newer one replaced it. A ticket written before this
-- change ends when it expires.
ALTER TABLE stream_tickets ADD COLUMN ends_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stream_tickets ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
UPDATE stream_tickets SET ends_at = expires_at;
