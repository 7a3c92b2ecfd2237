-- Issue 17, item 5: a refusal no longer tells the sender that the person exists. A request to nobody
-- stays pending for its sender until it expires; a refused one must look the same, so the sender is
-- shown a refusal as pending until `expires_at`, then expired. The person, and the audit log, keep
-- the refusal.
-- Applied in one transaction by `d4h migrate`, statement by statement (`-- split` separates them);
-- never edited once landed.

-- True for refusals made from now on (a person's refusal, a block's, an erasure's). Refusals recorded
-- before this migration were already shown to their senders and stay visible to them.
ALTER TABLE single_requests ADD COLUMN refusal_unseen boolean NOT NULL DEFAULT false;
-- split
-- The sender cancelled a request it was shown as pending but that the person had refused: the sender
-- sees it cancelled from then on, the person still sees their refusal.
ALTER TABLE single_requests ADD COLUMN withdrawn_at timestamptz;
