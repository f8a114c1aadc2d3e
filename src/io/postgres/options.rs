//! The options of a `'connector' = 'postgres-cdc'` table: Flink CDC's names, validated.

/// The options of a `'connector' = 'postgres-cdc'` table (Flink CDC's names), `connector`
/// included.
pub const OPTIONS: &[&str] = &[
    "connector",
    "hostname",
    "port",
    "username",
    "password",
    "database-name",
    "schema-name",
    "table-name",
    "slot.name",
    "decoding.plugin.name",
    "scan.startup.mode",
    "changelog-mode",
];

/// The metadata keys a `METADATA FROM '...'` column of a postgres-cdc table reads.
pub const METADATA_KEYS: &[&str] = &["database_name", "schema_name", "table_name", "op_ts"];

/// `'scan.startup.mode'`: where a postgres-cdc table starts reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupMode {
    /// The snapshot, then the changes (Flink CDC's default).
    Initial,
    /// The changes from now on, no snapshot.
    LatestOffset,
    /// The snapshot only: a bounded table.
    Snapshot,
}

/// A postgres-cdc table's validated options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// `hostname`.
    pub hostname: String,
    /// `port` (default 5432).
    pub port: u16,
    /// `username`.
    pub username: String,
    /// `password`.
    pub password: String,
    /// `database-name`.
    pub database: String,
    /// `schema-name` (default `public`).
    pub schema: String,
    /// `table-name`.
    pub table: String,
    /// `slot.name`: the replication slot of the streaming modes.
    pub slot: Option<String>,
    /// `scan.startup.mode`.
    pub startup: StartupMode,
    /// `changelog-mode` = `'upsert'` (default `'all'`): an UPDATE is read as a `+U` of the new
    /// row alone and a DELETE as a `-D` of the key (the table's default replica identity
    /// sends no more); the table is that upsert changelog normalized by its primary key.
    pub upsert: bool,
}

/// An option that is wrong: its key (`None` for a missing one: the table is at fault) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    /// The offending option's key, if the problem is one option's.
    pub key: Option<String>,
    /// The message.
    pub message: String,
}

impl PostgresOptions {
    /// Validates a table's `WITH` options (`(key, value)`, `connector` among them).
    ///
    /// Errors: an option the connector does not have (the message lists the valid ones), a
    /// missing `hostname`, `username`, `password`, `database-name` or `table-name`, a missing
    /// `slot.name` for a streaming mode, a `port` that is not a port number, a
    /// `decoding.plugin.name` other than `pgoutput`, an unknown `scan.startup.mode`.
    pub fn from_options(options: &[(String, String)]) -> Result<PostgresOptions, OptionError> {
        let at = |key: &str, message: String| OptionError {
            key: Some(key.to_string()),
            message,
        };
        if let Some((key, _)) = options.iter().find(|(k, _)| !OPTIONS.contains(&k.as_str())) {
            return Err(at(
                key,
                format!(
                    "Unsupported option '{key}' for connector 'postgres-cdc'; supported options: {}",
                    OPTIONS.join(", ")
                ),
            ));
        }
        let get = |key: &str| {
            options
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        let required = |key: &str| {
            get(key).ok_or_else(|| OptionError {
                key: None,
                message: format!("a 'postgres-cdc' table needs the option '{key}'"),
            })
        };
        let port = match get("port") {
            None => 5432,
            Some(p) => p.parse().map_err(|_| {
                at(
                    "port",
                    format!("'port' must be a port number (1-65535), not '{p}'"),
                )
            })?,
        };
        if let Some(plugin) = get("decoding.plugin.name").filter(|p| p != "pgoutput") {
            return Err(at(
                "decoding.plugin.name",
                format!("Unsupported 'decoding.plugin.name' '{plugin}': the connector decodes 'pgoutput', the plugin built into PostgreSQL 10 and later"),
            ));
        }
        let startup = match get("scan.startup.mode").as_deref() {
            None | Some("initial") => StartupMode::Initial,
            Some("latest-offset") => StartupMode::LatestOffset,
            Some("snapshot") => StartupMode::Snapshot,
            Some(other) => {
                return Err(at(
                    "scan.startup.mode",
                    format!("Unsupported 'scan.startup.mode' '{other}'; the supported modes are 'initial', 'latest-offset', 'snapshot'"),
                ))
            }
        };
        let upsert = match get("changelog-mode").as_deref() {
            None | Some("all") => false,
            Some("upsert") => true,
            Some(other) => {
                return Err(at(
                    "changelog-mode",
                    format!("Unsupported 'changelog-mode' '{other}'; the supported modes are 'all', 'upsert'"),
                ))
            }
        };
        let slot = get("slot.name");
        if slot.is_none() && startup != StartupMode::Snapshot {
            return Err(required("slot.name").unwrap_err());
        }
        Ok(PostgresOptions {
            hostname: required("hostname")?,
            port,
            username: required("username")?,
            password: required("password")?,
            database: required("database-name")?,
            schema: get("schema-name").unwrap_or_else(|| "public".to_string()),
            table: required("table-name")?,
            slot,
            startup,
            upsert,
        })
    }

    /// The table as row errors name it: `SCHEMA.TABLE`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.table)
    }
}
