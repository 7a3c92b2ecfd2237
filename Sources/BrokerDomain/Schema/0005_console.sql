-- The web console's CSRF tokens are HMACs under this key, so every instance on one database accepts
-- the forms any of them rendered. Same construction as the audit pseudonym key (0001).
INSERT INTO server_secrets (name, value)
VALUES ('console_csrf_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
