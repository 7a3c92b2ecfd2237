-- Issue 33: the delivery loop records its outcomes in batches (WebhookDeliveryStore.Record). The foreign key from
-- an attempt to its event checked every inserted attempt with a query of its own, on an event the same statement
-- had just settled (and so locked). The record now writes attempts only for events it settled, or locked first,
-- and a delete of an event waits for that lock.
--
-- What the key's ON DELETE CASCADE did is done by statement-level triggers: an event goes only with its company's
-- account (an erasure), and its attempts go with it, in the same transaction.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_id_fkey;
-- split

-- The delete that waited for a record's lock then sees the attempts it wrote only if it reads what committed
-- before it ran, as READ COMMITTED does (every transaction of the server that deletes). From an older snapshot
-- it would miss them, and leave them behind: such a delete is refused instead. (The foreign key's cascade
-- refused it too, as a serialization failure.)
CREATE FUNCTION webhook_attempts_follow_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'webhook events are deleted at READ COMMITTED only: an attempt recorded meanwhile would outlive its event'
            USING ERRCODE = 'serialization_failure';
    END IF;
    DELETE FROM webhook_attempts a USING gone g WHERE a.event_id = g.id;
    RETURN NULL;
END
$$;
-- split

CREATE TRIGGER webhook_events_attempts_go_too AFTER DELETE ON webhook_events
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_attempts_follow_events();
-- split

-- TRUNCATE fires no delete trigger, and the key used to refuse it.
CREATE FUNCTION webhook_attempts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE webhook_attempts;
    RETURN NULL;
END
$$;
-- split

CREATE TRIGGER webhook_events_attempts_truncated_too AFTER TRUNCATE ON webhook_events
    FOR EACH STATEMENT EXECUTE FUNCTION webhook_attempts_truncate();
