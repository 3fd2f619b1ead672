//! The client every command uses, from the global flags and the environment.

use bigq::{Client, Transport};

use crate::cli::Global;
use crate::error::Result;

/// Builds the client: flags first, then `GOOGLE_CLOUD_PROJECT`, `BIGQUERY_EMULATOR_HOST` and
/// `BIGQUERY_STORAGE_EMULATOR_HOST` through [`bigq::ClientBuilder::from_env`], then
/// Application Default Credentials.
pub async fn client(global: &Global, transport: Transport) -> Result<Client> {
    let mut b = Client::builder().with_transport(transport);
    if let Some(p) = &global.project {
        b = b.with_project(p);
    }
    if let Some(l) = &global.location {
        b = b.with_location(l);
    }
    if let Some(h) = &global.emulator {
        b = b.with_emulator(h);
    }
    if let Some(h) = &global.emulator_grpc {
        b = b.with_emulator_grpc(h);
    }
    Ok(b.from_env().build().await?)
}
