-- Each person's loss from group releases per calendar month, by the company and the group request that
-- spent it (issue 32). `privacy_person_loss` keeps the total the cap is checked against; this table is the
-- same debits split by request, so that no company can take more than its share of a person's yearly cap
-- (`PRIVACY_COMPANY_SHARE`), and so a person can see what each request cost them (`GET /v1/me/privacy`).
-- No foreign keys: an erased company's requests and their debits are kept (erasing a company must not
-- give it a fresh share), and person numbers are never reused, so an erased person's rows only age out.
CREATE TABLE privacy_person_request_loss (
    person_number int4 NOT NULL,
    month         date NOT NULL,
    company_id    uuid NOT NULL,
    request_id    uuid NOT NULL,
    loss_micro    bigint NOT NULL CHECK (loss_micro >= 0),
    PRIMARY KEY (person_number, request_id, month)
);
-- split
-- The share check: one company's debits of each member of a cohort over the last twelve months.
CREATE INDEX privacy_person_request_loss_company ON privacy_person_request_loss (company_id, person_number, month);
