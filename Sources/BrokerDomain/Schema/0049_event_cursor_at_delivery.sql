-- Subscription events queued by the upload's own statement (issue 33): `subscription.data_available` and
-- `subscription.positions_available` now carry the arrival number their download cursor stands for in
-- `cursor_arrival`, and the cursor itself is sealed (AES-GCM under `download_cursor_key`, `DownloadCursor`)
-- when a delivery claims the event (`WebhookDeliveryStore.claim`), which adds it to the delivered `data` as
-- `cursor`, exactly as before. Until now the cursor was sealed in Swift before the event was queued, so an
-- upload with live subscribers (every runner's, during a run) needed a transaction, the key and a round trip
-- per subscriber. Events queued before this migration keep their sealed `cursor` in `data` and no
-- `cursor_arrival`. Stop every server before it: an instance from before it would deliver a new event
-- without its cursor.
ALTER TABLE webhook_events ADD COLUMN cursor_arrival bigint;
