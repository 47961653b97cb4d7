// Package keystone runs a real Keystone for tests: Debian's python3-keystone
// (22.0.2, Zed) under uwsgi on 127.0.0.1, SQLite in WAL mode, fernet tokens.
//
// Start prepares a temporary directory (keystone.conf, database, key
// repositories), serves Keystone on a free port and registers the catalog's
// identity endpoint. The database and keys come from a template built once
// per machine with keystone-manage db_sync and bootstrap (the slow part) and
// copied for each instance, so a start costs about as much as uwsgi loading
// Keystone.
//
// SQLite must run in WAL mode: with the default rollback journal, deleting an
// application credential while another request holds the database hangs for
// five seconds and fails with "database is locked" (see
// /work/shared/research/feasibility.md §5).
//
// Keystone's policy for application credentials in this release (keystone/
// common/policies/application_credential.py and base.py):
//
//   - create: rule:owner — only the user itself, with a project-scoped
//     token; the credential gets the token's roles on that project.
//   - get/list: admin_required (role:admin or is_admin:1) or a system-scoped
//     reader or the owner.
//   - delete: rule:admin_or_owner = role:admin or is_admin:1 or the owner.
//     enforce_scope is off by default, so a project-scoped token with the
//     admin role on any project (the usual "magnum" service user on the
//     "service" project) may delete another user's credential; the "member"
//     or "service" roles may not (403). Keystone also refuses the delete when
//     the token is itself a restricted application credential or a trust.
//   - the user id in /v3/users/{user_id}/application_credentials/{id} is only
//     the policy target: Zed looks the credential up by id alone.
//
// uwsgi serves through its HTTP router (keep-alive) to one worker with one
// thread: with several threads, oslo.concurrency's locks (eventlet is
// installed but not monkey-patched) fail across threads under concurrent
// requests and Keystone hangs. Requests take about 15 ms with the in-process
// cache, so one thread is plenty for tests.
//
// Nothing here is meant for production: passwords are fixed and bcrypt runs
// with 4 rounds so that password authentication is fast.
package keystone
