//! The command line: global flags and one subcommand each.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A BigQuery command-line client: queries, Storage Read and Write, tables, and a local
/// emulator.
#[derive(Debug, Parser)]
#[command(name = "bigq", version, about, long_about = None)]
pub struct Cli {
    /// Where and as whom to connect.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// The project (default: GOOGLE_CLOUD_PROJECT).
    #[arg(long, global = true)]
    pub project: Option<String>,
    /// The location of jobs and datasets (US, EU, a region).
    #[arg(long, global = true)]
    pub location: Option<String>,
    /// An emulator's REST address, e.g. 127.0.0.1:9050 (default: BIGQUERY_EMULATOR_HOST).
    #[arg(long, global = true, value_name = "HOST")]
    pub emulator: Option<String>,
    /// An emulator's gRPC address, e.g. 127.0.0.1:9060 (default:
    /// BIGQUERY_STORAGE_EMULATOR_HOST).
    #[arg(long, global = true, value_name = "HOST")]
    pub emulator_grpc: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a query and print its rows.
    Query(QueryArgs),
    /// Read a table through the Storage Read API.
    Read(ReadArgs),
    /// Write rows from a file into a table through the Storage Write API.
    Write(WriteArgs),
    /// Print a table's first rows, through tabledata.list (no query, nothing billed).
    Head(HeadArgs),
    /// List the datasets of the project.
    Datasets,
    /// List the project's jobs, newest first: id, state, statement type, bytes billed.
    Jobs {
        /// Only jobs in this state (pending, running, done).
        #[arg(long)]
        state: Option<String>,
        /// At most this many jobs.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Cancel a job.
    Cancel {
        /// The job id.
        job: String,
        /// The job's location.
        #[arg(long)]
        location: Option<String>,
    },
    /// List the tables of a dataset.
    Tables {
        /// `dataset` or `project.dataset`.
        dataset: String,
    },
    /// Print a table's whole resource: type, sizes, partitioning, clustering, keys,
    /// labels, options and schema.
    Show {
        /// `dataset.table` or `project.dataset.table`.
        table: String,
    },
    /// Print a table's schema.
    Schema {
        /// `dataset.table` or `project.dataset.table`.
        table: String,
        /// Print BigQuery's JSON schema (as `bq show --schema` does).
        #[arg(long)]
        json: bool,
    },
    /// Create a dataset.
    MkDataset {
        /// `dataset` or `project.dataset`.
        dataset: String,
        /// A description.
        #[arg(long)]
        description: Option<String>,
    },
    /// Create a table.
    MkTable(MkTableArgs),
    /// Delete a table, or with --dataset a dataset.
    Rm {
        /// `dataset.table`, or with --dataset `dataset`.
        id: String,
        /// Delete a dataset rather than a table.
        #[arg(long, short = 'd')]
        dataset: bool,
        /// With --dataset: delete its tables too.
        #[arg(long, short = 'r')]
        recursive: bool,
    },
    /// Run a local BigQuery emulator (REST and gRPC) until Ctrl-C.
    Emulator(EmulatorArgs),
}

/// How rows are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A grid of the first rows.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON array of objects.
    Json,
    /// One JSON object per line.
    Ndjson,
    /// Parquet (needs --out).
    Parquet,
}

/// `bigq query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The GoogleSQL statement.
    pub sql: String,
    /// A named parameter `name=TYPE:value` (`@name` in the SQL), e.g. `min=INT64:10`.
    #[arg(long = "param", value_name = "NAME=TYPE:VALUE")]
    pub params: Vec<String>,
    /// A positional parameter `TYPE:value` (`?` in the SQL), in order.
    #[arg(long = "bind", value_name = "TYPE:VALUE")]
    pub binds: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Print at most this many rows (default for --format table: 100).
    #[arg(long)]
    pub max_rows: Option<u64>,
    /// Validate the query and print the bytes it would process.
    #[arg(long)]
    pub dry_run: bool,
    /// Always create a job (no short query mode).
    #[arg(long)]
    pub job: bool,
    /// Use the v2 gRPC API rather than REST.
    #[arg(long)]
    pub grpc: bool,
    /// Page large results over the v2 API rather than reading them with Storage Read.
    #[arg(long)]
    pub no_storage_read: bool,
    /// The default dataset for unqualified table names.
    #[arg(long)]
    pub dataset: Option<String>,
}

/// `bigq read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// `dataset.table` or `project.dataset.table`.
    pub table: String,
    /// Only these columns, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// A row filter, e.g. `id > 10`.
    #[arg(long = "where", value_name = "FILTER")]
    pub filter: Option<String>,
    /// At most this many read streams (default: twice the machine's parallelism).
    #[arg(long)]
    pub streams: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: Format,
    /// Write to this file rather than stdout.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

/// `bigq head`.
#[derive(Debug, Args)]
pub struct HeadArgs {
    /// `dataset.table` or `project.dataset.table`.
    pub table: String,
    /// How many rows.
    #[arg(long, short = 'n', default_value_t = 10)]
    pub rows: u64,
    /// The first row to print (0-based).
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Only these columns, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// `bigq write`.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// `dataset.table` or `project.dataset.table`.
    pub table: String,
    /// The rows: a `.ndjson`/`.jsonl`/`.json` file (one JSON object a line) or a `.csv`
    /// file with a header line.
    #[arg(long)]
    pub from: PathBuf,
    /// The file's format when its extension does not say.
    #[arg(long, value_enum)]
    pub format: Option<InputFormat>,
    /// All rows or none: write to a PENDING stream and commit it at the end.
    #[arg(long)]
    pub pending: bool,
}

/// The formats `bigq write` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// One JSON object a line.
    Ndjson,
    /// CSV with a header line naming the columns.
    Csv,
}

/// `bigq mk-table`.
#[derive(Debug, Args)]
pub struct MkTableArgs {
    /// `dataset.table` or `project.dataset.table`.
    pub table: String,
    /// Columns `name:TYPE[:MODE]`, comma-separated, e.g. `id:INT64:REQUIRED,name:STRING`.
    #[arg(long, conflicts_with = "schema_file")]
    pub schema: Option<String>,
    /// A BigQuery JSON schema file (an array of fields, as `bq show --schema` prints).
    #[arg(long)]
    pub schema_file: Option<PathBuf>,
    /// A description.
    #[arg(long)]
    pub description: Option<String>,
    /// A friendly name.
    #[arg(long)]
    pub friendly_name: Option<String>,
    /// Labels, `key=value`; repeat for more.
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// When the table is deleted, milliseconds since the epoch.
    #[arg(long)]
    pub expiration: Option<i64>,
    /// Time partitioning: `HOUR`, `DAY`, `MONTH` or `YEAR`, of ingestion time or, with
    /// `:COLUMN`, of a column (`DAY:placed_at`).
    #[arg(long, conflicts_with = "range_partitioning")]
    pub time_partitioning: Option<String>,
    /// How long a time partition is kept, in milliseconds.
    #[arg(long, requires = "time_partitioning")]
    pub partition_expiration: Option<i64>,
    /// Integer-range partitioning: `COLUMN:START:END:INTERVAL`.
    #[arg(long)]
    pub range_partitioning: Option<String>,
    /// Queries must filter on the partitioning column.
    #[arg(long)]
    pub require_partition_filter: bool,
    /// Clustering columns, comma-separated, in order.
    #[arg(long)]
    pub clustering: Option<String>,
}

/// `bigq emulator`.
#[derive(Debug, Args)]
pub struct EmulatorArgs {
    /// The REST port (0 picks a free one).
    #[arg(long, default_value_t = 9050)]
    pub port: u16,
    /// The gRPC port (0 picks a free one).
    #[arg(long, default_value_t = 9060)]
    pub grpc_port: u16,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
}
