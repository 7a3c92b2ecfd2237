-- A phone's upload in one statement (issue 33; `SampleStore.ingestAlone`, `PositionStore.ingestAlone`): the
-- arrival row lock, the rows, the rollups and the batch's record, committed as the statement ends, with no
-- transaction around it. Its snapshot is taken before it waits for the lock, so it must know whether anyone
-- who held the lock committed meanwhile: every holder (`SampleStore.lockArrivals`) now adds one to
-- `version`, and the statement compares the version it saw with the one it locked. Stop every server before
-- this migration: an instance from before it holds the lock without adding to `version`, and an upload's
-- statement on a new instance could not tell.
ALTER TABLE sample_arrivals ADD COLUMN version bigint NOT NULL DEFAULT 0;
-- split
-- Raised by that statement when it cannot finish alone (the lock moved after its snapshot, or subscribers
-- must be told in the same transaction): the whole statement is undone, and the upload is stored again in
-- a transaction, the usual way. Its own SQLSTATE, so that nothing else is mistaken for it.
CREATE FUNCTION upload_needs_transaction(reason text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the upload needs a transaction: %', reason USING ERRCODE = 'D4H01';
END
$$;
