-- API keys get a scope and an optional expiry (issue 17, item 8). A `read_only` key may call only the
-- operations that change nothing; a `full` key everything a company's session may, except what no key may
-- do at all (manage keys, change credentials, delete the account: `AuthenticationGate`). Existing keys keep
-- working as they did: `full`, no expiry.
ALTER TABLE api_keys
    ADD COLUMN scope text NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read_only')),
    ADD COLUMN expires_at timestamptz;
