//! Set-up the integration tests share: an emulator serving project `p`, a gRPC channel to
//! it, and its REST API for arranging and checking what the gRPC calls do.

// Each test binary compiles its own copy of this module and uses a part of it.
#![allow(dead_code)]

use bigq_emulator::Emulator;
use serde_json::{Value, json};
use tonic::transport::Channel;

/// An emulator serving project `p`.
pub async fn emulator() -> Emulator {
    Emulator::builder()
        .with_project("p")
        .start()
        .await
        .expect("start")
}

/// A channel to the emulator's gRPC endpoint.
pub async fn channel(emu: &Emulator) -> Channel {
    Channel::from_shared(emu.grpc_endpoint())
        .unwrap()
        .connect()
        .await
        .expect("connect")
}

/// The REST API of project `p` on one emulator.
#[derive(Clone, Debug)]
pub struct Rest {
    base: String,
    http: reqwest::Client,
}

impl Rest {
    /// The REST API of `emu`.
    pub fn new(emu: &Emulator) -> Rest {
        Rest {
            base: format!("{}/bigquery/v2/projects/p", emu.rest_endpoint()),
            http: reqwest::Client::new(),
        }
    }

    /// POSTs `body` to `path` (under the project); the status and the JSON answer.
    pub async fn post_status(&self, path: &str, body: Value) -> (reqwest::StatusCode, Value) {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap())
    }

    /// POSTs `body` to `path`; the JSON answer, an error or not.
    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.post_status(path, body).await.1
    }

    /// POSTs `body` to `path`, which must succeed; the JSON answer.
    pub async fn post_ok(&self, path: &str, body: Value) -> Value {
        let (status, v) = self.post_status(path, body).await;
        assert!(status.is_success(), "{path}: {v}");
        v
    }

    /// GETs `path`; the status alone.
    pub async fn get_status(&self, path: &str) -> reqwest::StatusCode {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .status()
    }

    /// GETs `path`; the JSON answer.
    pub async fn get(&self, path: &str) -> Value {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Creates dataset `id`, which must succeed.
    pub async fn dataset(&self, id: &str) -> Value {
        self.post_ok("/datasets", json!({"datasetReference": {"datasetId": id}}))
            .await
    }

    /// Runs `sql` (GoogleSQL) with `jobs.query`, which must not fail; the answer.
    pub async fn query(&self, sql: &str) -> Value {
        let v = self
            .post("/queries", json!({"query": sql, "useLegacySql": false}))
            .await;
        assert!(v.get("error").is_none(), "{sql}: {v}");
        v
    }
}

/// The `f`/`v` cells of a REST rows response, row by row.
pub fn cells(v: &Value) -> Vec<Vec<Value>> {
    v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r["f"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c["v"].clone())
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}
