//! Hourly payouts, spawned from `main` on every replica of the service.

use std::time::Duration;

use sqlx::PgPool;
use uuid::Uuid;

pub struct DuePayout {
    pub id: i64,
    pub account_id: String,
    pub amount_minor: i64,
}

async fn due_payouts(pool: &PgPool) -> Vec<DuePayout> {
    let _ = pool;
    Vec::new()
}

/// Defect: every replica runs this loop and mints its own key per payout, so with
/// three replicas the provider sees three different keys and pays three times.
pub async fn payout_loop(pool: PgPool, client: reqwest::Client) {
    let mut interval = tokio::time::interval(Duration::from_secs(3600));
    loop {
        interval.tick().await;
        for payout in due_payouts(&pool).await {
            let key = Uuid::new_v4().to_string();
            let _ = client
                .post("https://payouts.example.com/v1/payouts")
                .header("Idempotency-Key", key)
                .body(format!("{}:{}", payout.account_id, payout.amount_minor))
                .send()
                .await;
        }
    }
}

/// Fixed twin: the key is derived from the payout row, so every replica (and every
/// re-run) sends the same key for the same payout and the provider pays once. It still
/// runs on every replica without a lock: that only repeats work the provider
/// deduplicates (a lock such as a Postgres advisory lock would also save the calls).
/// idemlint accepts either remedy.
pub async fn payout_loop_fixed(pool: PgPool, client: reqwest::Client) {
    let mut interval = tokio::time::interval(Duration::from_secs(3600));
    loop {
        interval.tick().await;
        for payout in due_payouts(&pool).await {
            let key = format!("payout-{}", payout.id);
            let _ = client
                .post("https://payouts.example.com/v1/payouts")
                .header("Idempotency-Key", key)
                .body(format!("{}:{}", payout.account_id, payout.amount_minor))
                .send()
                .await;
        }
    }
}

pub fn spawn_jobs(pool: PgPool, client: reqwest::Client) {
    tokio::spawn(payout_loop(pool, client));
}
