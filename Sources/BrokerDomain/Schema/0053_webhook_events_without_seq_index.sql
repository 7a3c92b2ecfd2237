-- Issue 33: `seq` orders the events of one request, and only `webhook_events_pending_by_request` is read by it.
-- Its own unique index was read by nothing: an identity column's values are unique as it hands them out. Every
-- event is written three times (queued, claimed, settled), none of them a HOT update, so each added an entry
-- to this index three times, in the uploads that queue events and in the delivery loop's claims and records.
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_seq_key;
