-- Why a failed task failed, as a kind a client can act on (docs/api.md#failures): invalid_input,
-- content_policy, provider_unavailable, deadline, canceled or internal. NULL for a task that has not
-- failed, and for tasks that failed before kinds were recorded. The message stays in `error`.
ALTER TABLE tasks ADD COLUMN error_kind text
    CHECK (error_kind IN ('invalid_input', 'content_policy', 'provider_unavailable', 'deadline', 'canceled',
                          'internal'));
