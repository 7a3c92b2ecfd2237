-- Issue 33: the delivery loop records its outcomes in batches (WebhookDeliveryStore.Record). The foreign key from
-- an attempt to its event checked every inserted attempt with a query of its own, on an event the same statement
-- had just settled (and so locked). The record now writes attempts only for events it settled, or locked first,
-- and a delete of an event waits for that lock: no attempt can outlive its event, key or not.
--
-- What the key's ON DELETE CASCADE did is done by a statement-level trigger: an event goes only with its company's
-- account (an erasure), and its attempts go with it, in the same transaction.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_id_fkey;
-- split

CREATE FUNCTION webhook_attempts_follow_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_attempts a USING gone g WHERE a.event_id = g.id;
    RETURN NULL;
END
$$;
-- split

CREATE TRIGGER webhook_events_attempts_go_too AFTER DELETE ON webhook_events
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_attempts_follow_events();
