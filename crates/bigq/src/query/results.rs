//! A completed query's results: statistics, schema, the first page in memory, and the rows
//! after it, paged through the client's transport or read through Storage Read.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bigq_codec::schema::TableSchema;
use futures::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;

use super::pages::BatchStream;
use super::response::{JobReference, QueryStats, ResultPage};
use super::rows::RowStream;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::read::ReadBuilder;

/// A completed query: statistics, schema and the rows (first page in memory, later pages
/// fetched as the rows are consumed).
#[derive(Debug)]
pub struct QueryResults {
    client: Client,
    stats: QueryStats,
    schema: TableSchema,
    arrow_schema: SchemaRef,
    batches: Vec<RecordBatch>,
    rows_in_first: u64,
    page_size: Option<u32>,
    location: Option<String>,
    use_storage_read: bool,
    ordered: bool,
}

impl QueryResults {
    /// The results of a complete query whose last response is `page`.
    pub(crate) fn new(
        client: Client,
        page: ResultPage,
        sql: &str,
        page_size: Option<u32>,
        location: Option<String>,
        use_storage_read: bool,
    ) -> Result<Self> {
        let schema = page.stats.schema.clone().unwrap_or_default();
        let arrow_schema = match page.arrow_schema {
            Some(s) => s,
            None => schema.to_arrow()?,
        };
        Ok(QueryResults {
            // Only a result read on after its first page needs to know.
            ordered: page.stats.page_token.is_some() && has_order_by(sql),
            use_storage_read,
            client,
            page_size,
            location,
            rows_in_first: page.batches.iter().map(|b| b.num_rows() as u64).sum(),
            stats: page.stats,
            schema,
            arrow_schema,
            batches: page.batches,
        })
    }

    /// The statistics, without the rows.
    pub(crate) fn into_stats(self) -> QueryStats {
        self.stats
    }

    /// The statistics.
    pub fn stats(&self) -> &QueryStats {
        &self.stats
    }

    /// The result schema.
    pub fn schema(&self) -> &TableSchema {
        &self.schema
    }

    /// The Arrow schema of the batches.
    pub fn arrow_schema(&self) -> SchemaRef {
        self.arrow_schema.clone()
    }

    /// Rows in the whole result, when BigQuery says.
    pub fn total_rows(&self) -> Option<u64> {
        self.stats.total_rows
    }

    /// The job, when one was created.
    pub fn job_reference(&self) -> Option<&JobReference> {
        self.stats.job_reference.as_ref()
    }

    /// Whether the rows after the first response will be read through the Storage Read
    /// API (see [`QueryBuilder::use_storage_read`](super::QueryBuilder::use_storage_read))
    /// rather than result pages.
    pub fn reads_with_storage_api(&self) -> bool {
        self.storage_read_job().is_some()
    }

    fn storage_read_job(&self) -> Option<JobReference> {
        storage_read_job(
            &self.stats,
            self.use_storage_read && self.client.inner.storage_for_queries,
        )
    }

    /// All rows as a stream of Arrow batches.
    pub fn into_batches(self) -> BatchStream {
        if let Some(job) = self.storage_read_job() {
            let (client, ordered) = (self.client, self.ordered);
            let read = async move {
                destination_read(&client, &job, ordered)
                    .await?
                    .batches()
                    .await
            };
            return BatchStream::storage_read(
                self.arrow_schema,
                futures::stream::once(read).try_flatten().boxed(),
            );
        }
        let first_rows = self.rows_in_first;
        let pages = match (self.stats.job_reference.as_ref(), &self.stats.page_token) {
            (Some(j), Some(token)) if !j.job_id.is_empty() => {
                let job = JobReference {
                    location: j.location.clone().or(self.location.clone()),
                    ..j.clone()
                };
                Some(self.client.inner.api.result_pages(
                    job,
                    self.page_size,
                    self.schema,
                    token.clone(),
                    first_rows,
                ))
            }
            _ => None,
        };
        BatchStream::new(self.arrow_schema, self.batches, pages)
    }

    /// All rows decoded into `T`.
    pub fn into_rows<T: DeserializeOwned + Send + 'static>(self) -> RowStream<T> {
        if let Some(job) = self.storage_read_job() {
            let (client, ordered) = (self.client, self.ordered);
            let read = async move { destination_read(&client, &job, ordered).await?.rows().await };
            return RowStream::decoded(
                self.arrow_schema,
                futures::stream::once(read).try_flatten().boxed(),
            );
        }
        RowStream::new(self.into_batches())
    }

    /// Collects every row into `T`.
    pub async fn fetch_all<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>> {
        self.into_rows().try_collect().await
    }
}

/// The job whose destination table holds the rows after the first response, when they are
/// read through Storage Read: there are more pages, Storage Read is `allowed` (asked for and
/// the same service as the v2 side), and a job ran.
pub(crate) fn storage_read_job(stats: &QueryStats, allowed: bool) -> Option<JobReference> {
    if !(allowed && stats.page_token.is_some()) {
        return None;
    }
    stats.job_reference.clone().filter(|j| !j.job_id.is_empty())
}

/// A Storage Read of a finished query job's destination table: on one stream, in order, when
/// the query sorts its rows.
async fn destination_read(
    client: &Client,
    job: &JobReference,
    ordered: bool,
) -> Result<ReadBuilder> {
    let found = client.get_job(job).await?;
    let table = found.destination_table().ok_or_else(|| {
        Error::new(
            ErrorKind::Decode,
            format!("query job {} has no destination table to read", job.job_id),
        )
    })?;
    let read = client.read(table);
    Ok(if ordered {
        read.max_streams(1).ordered(true)
    } else {
        read
    })
}

/// Whether a query sorts its result (`ORDER BY` anywhere, as the Python client checks):
/// such results are read on one stream to keep their order.
fn has_order_by(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    let mut rest = upper.as_str();
    while let Some(i) = rest.find("ORDER") {
        let after = rest.get(i + 5..).unwrap_or_default();
        let trimmed = after.trim_start();
        let word_start = i == 0 || !rest.as_bytes().get(i - 1).is_some_and(|b| is_ident(*b));
        if word_start
            && trimmed.len() < after.len()
            && trimmed.starts_with("BY")
            && trimmed.as_bytes().get(2).is_none_or(|b| !is_ident(*b))
        {
            return true;
        }
        rest = after;
    }
    false
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::has_order_by;

    #[test]
    fn order_by_is_found_as_words() {
        assert!(has_order_by("SELECT x FROM t ORDER BY x"));
        assert!(has_order_by("select x from t order\n  by x desc"));
        assert!(has_order_by("SELECT ARRAY_AGG(x ORDER BY y) FROM t"));
        assert!(!has_order_by("SELECT x FROM t"));
        assert!(!has_order_by("SELECT border_by FROM t"));
        assert!(!has_order_by("SELECT ORDERBY FROM t"));
        assert!(!has_order_by("SELECT x_order BY_y"));
    }
}
