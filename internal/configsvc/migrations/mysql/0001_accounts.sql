-- Times are Unix milliseconds in BIGINT columns: one representation on all
-- three engines, no time-zone conversions on the way in or out. MySQL
-- commits after every DDL statement, so each statement is safe to re-run
-- and indexes are declared inside their tables.
CREATE TABLE IF NOT EXISTS cfg_users (
    id                   BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    username             VARCHAR(64)  NOT NULL,
    username_key         VARCHAR(64)  NOT NULL,
    email                VARCHAR(254),
    locale               VARCHAR(16),
    role                 VARCHAR(16)  NOT NULL,
    password_hash        VARCHAR(255) NOT NULL,
    must_change_password SMALLINT     NOT NULL DEFAULT 0,
    created_at           BIGINT       NOT NULL,
    updated_at           BIGINT       NOT NULL,
    UNIQUE KEY cfg_users_username_key (username_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cfg_deletion_requests (
    user_id       BIGINT       NOT NULL PRIMARY KEY,
    token         VARCHAR(64)  NOT NULL,
    requested_by  BIGINT       NOT NULL,
    otp_hash      VARCHAR(255),
    otp_required  SMALLINT     NOT NULL,
    attempts      INT          NOT NULL DEFAULT 0,
    attempt_limit INT          NOT NULL,
    expires_at    BIGINT       NOT NULL,
    created_at    BIGINT       NOT NULL,
    UNIQUE KEY cfg_deletion_requests_token (token),
    CONSTRAINT cfg_deletion_requests_user FOREIGN KEY (user_id) REFERENCES cfg_users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cfg_refresh_tokens (
    jti        VARCHAR(64) NOT NULL PRIMARY KEY,
    family     VARCHAR(64) NOT NULL,
    user_id    BIGINT      NOT NULL,
    expires_at BIGINT      NOT NULL,
    used_at    BIGINT,
    revoked    SMALLINT    NOT NULL DEFAULT 0,
    KEY cfg_refresh_tokens_family (family),
    CONSTRAINT cfg_refresh_tokens_user FOREIGN KEY (user_id) REFERENCES cfg_users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cfg_revoked_tokens (
    jti        VARCHAR(64) NOT NULL PRIMARY KEY,
    expires_at BIGINT      NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cfg_audit_events (
    id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    occurred_at BIGINT       NOT NULL,
    actor       VARCHAR(64)  NOT NULL,
    action      VARCHAR(64)  NOT NULL,
    target      VARCHAR(255),
    outcome     VARCHAR(16)  NOT NULL,
    details     TEXT,
    client_ip   VARCHAR(64),
    request_id  VARCHAR(64),
    KEY cfg_audit_events_occurred (occurred_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS cfg_product_class_groups (
    name            VARCHAR(128)  NOT NULL PRIMARY KEY,
    description     VARCHAR(1024),
    product_classes TEXT          NOT NULL,
    updated_at      BIGINT        NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
