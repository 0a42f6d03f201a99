//! idemlint: finds idempotency keys that are computed from an ephemeral value (a random
//! UUID, a clock reading) inside a scope that runs again per attempt — an interceptor, a
//! retry closure or loop, a callback that re-invokes the service method, a scheduler job
//! on every replica — so each retry sends a new key and a customer is charged twice.
//!
//! Layering (imports only point down): [`model`], [`catalogue`], [`text`] →
//! [`lang`] (frontends), [`classify`], [`flow`] → [`index`], [`finding`], [`identity`], [`baseline`],
//! [`prefilter`] → [`rules`] → [`config`] → [`suppress`] → [`report`], [`fix`], [`discover`]
//! → [`check`] (the pipeline) → [`add_suppression`], [`cargo`], [`lsp`], [`cli`]. See ARCHITECTURE.md.

pub mod add_suppression;
pub mod baseline;
pub mod cargo;
pub mod catalogue;
pub mod check;
pub mod classify;
pub mod cli;
pub mod config;
pub mod discover;
pub mod finding;
pub mod fix;
pub mod flow;
pub mod fsio;
pub mod git;
pub mod identity;
pub mod index;
pub mod lang;
pub mod lsp;
pub mod model;
pub mod name;
pub mod prefilter;
pub mod progress;
pub mod report;
pub mod rules;
pub mod suppress;
pub mod text;
