//! Decoding PostgreSQL's `pgoutput` logical-replication messages (protocol version 1, the
//! format of PostgreSQL's "Logical Replication Message Formats" chapter): what a replication
//! slot's changes are, as `pg_logical_slot_peek_binary_changes` returns them, one message a
//! row. The client crate does not decode them; this module only decodes, the reader
//! ([`crate::io::postgres`]) turns them into changes.

/// One decoded message. Values are Postgres's text output of each column (`None` for NULL),
/// or [`Value::Unchanged`] for a TOASTed value an UPDATE did not change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A transaction begins.
    Begin {
        /// The transaction's commit LSN.
        final_lsn: u64,
        /// Its commit time, microseconds since 2000-01-01 00:00:00 UTC.
        commit_micros: i64,
        /// Its id.
        xid: u32,
    },
    /// A transaction commits.
    Commit {
        /// The commit's LSN.
        commit_lsn: u64,
        /// The LSN after it.
        end_lsn: u64,
        /// The commit time, microseconds since 2000-01-01 00:00:00 UTC.
        commit_micros: i64,
    },
    /// The columns of a table (sent before its first change in a session, and when it changes).
    Relation {
        /// The table's OID.
        id: u32,
        /// Its schema.
        namespace: String,
        /// Its name.
        name: String,
        /// `REPLICA IDENTITY`: `d` default (the primary key), `f` full, `i` an index, `n` nothing.
        identity: u8,
        /// Its columns: name, type OID, and whether it is part of the replica identity key.
        columns: Vec<(String, u32, bool)>,
    },
    /// A row inserted.
    Insert {
        /// The table's OID.
        relation: u32,
        /// The new row.
        new: Vec<Value>,
    },
    /// A row updated: its old values when the table's identity sends them (`REPLICA IDENTITY
    /// FULL`: all; a changed key: the key), and its new values.
    Update {
        /// The table's OID.
        relation: u32,
        /// The old row or key, if sent.
        old: Option<Vec<Value>>,
        /// Whether `old` is the key alone (its other columns NULL), not the whole row.
        old_is_key: bool,
        /// The new row.
        new: Vec<Value>,
    },
    /// A row deleted: its old row (`REPLICA IDENTITY FULL`) or its key (the other columns NULL).
    Delete {
        /// The table's OID.
        relation: u32,
        /// The old row or key.
        old: Vec<Value>,
        /// Whether `old` is the key alone (its other columns NULL), not the whole row.
        old_is_key: bool,
    },
    /// Tables truncated.
    Truncate {
        /// Their OIDs.
        relations: Vec<u32>,
    },
    /// Anything else (an origin, a type, a logical message): nothing to apply.
    Other(u8),
}

/// A column's value in a row message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// NULL.
    Null,
    /// A TOASTed value an UPDATE did not change (not sent).
    Unchanged,
    /// The value's text.
    Text(String),
}

/// Why a message could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed pgoutput message: {0}")]
pub struct DecodeError(String);

/// Decodes one message.
///
/// Errors: the bytes end early, a value is not UTF-8, or a tag is not one of the protocol's.
pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    let tag = r.u8()?;
    Ok(match tag {
        b'B' => Message::Begin {
            final_lsn: r.u64()?,
            commit_micros: r.u64()? as i64,
            xid: r.u32()?,
        },
        b'C' => {
            r.u8()?;
            Message::Commit {
                commit_lsn: r.u64()?,
                end_lsn: r.u64()?,
                commit_micros: r.u64()? as i64,
            }
        }
        b'R' => {
            let id = r.u32()?;
            let namespace = r.string()?;
            let name = r.string()?;
            let identity = r.u8()?;
            let n = r.u16()?;
            let mut columns = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let key = r.u8()? & 1 == 1;
                let column = r.string()?;
                let ty = r.u32()?;
                r.u32()?;
                columns.push((column, ty, key));
            }
            Message::Relation {
                id,
                namespace,
                name,
                identity,
                columns,
            }
        }
        b'I' => {
            let relation = r.u32()?;
            r.expect(b'N')?;
            Message::Insert {
                relation,
                new: r.tuple()?,
            }
        }
        b'U' => {
            let relation = r.u32()?;
            let (old, old_is_key, new) = match r.u8()? {
                tag @ (b'K' | b'O') => {
                    let old = r.tuple()?;
                    r.expect(b'N')?;
                    (Some(old), tag == b'K', r.tuple()?)
                }
                b'N' => (None, false, r.tuple()?),
                other => return Err(r.error(&format!("update tuple tag {other:#04x}"))),
            };
            Message::Update {
                relation,
                old,
                old_is_key,
                new,
            }
        }
        b'D' => {
            let relation = r.u32()?;
            let old_is_key = match r.u8()? {
                tag @ (b'K' | b'O') => tag == b'K',
                other => return Err(r.error(&format!("delete tuple tag {other:#04x}"))),
            };
            Message::Delete {
                relation,
                old: r.tuple()?,
                old_is_key,
            }
        }
        b'T' => {
            let n = r.u32()?;
            r.u8()?;
            let relations = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
            Message::Truncate { relations }
        }
        b'O' | b'Y' | b'M' => Message::Other(tag),
        other => return Err(r.error(&format!("unknown message tag {other:#04x}"))),
    })
}

/// A cursor over a message's bytes (big-endian integers, NUL-terminated strings).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> DecodeError {
        DecodeError(format!("{what} at byte {}", self.at))
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.error("the message ends early"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn expect(&mut self, tag: u8) -> Result<(), DecodeError> {
        match self.u8()? {
            t if t == tag => Ok(()),
            t => Err(self.error(&format!("expected tag {:?}, found {t:#04x}", tag as char))),
        }
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.error("a string without its NUL"))?;
        let text = self.utf8(&rest[..len])?;
        self.at += len + 1;
        Ok(text)
    }

    fn utf8(&self, bytes: &[u8]) -> Result<String, DecodeError> {
        String::from_utf8(bytes.to_vec()).map_err(|_| self.error("text that is not UTF-8"))
    }

    fn tuple(&mut self) -> Result<Vec<Value>, DecodeError> {
        let n = self.u16()?;
        let mut values = Vec::with_capacity(n as usize);
        for _ in 0..n {
            values.push(match self.u8()? {
                b'n' => Value::Null,
                b'u' => Value::Unchanged,
                b't' => {
                    let len = self.u32()? as usize;
                    let bytes = self.take(len)?.to_vec();
                    Value::Text(self.utf8(&bytes)?)
                }
                other => return Err(self.error(&format!("column value kind {other:#04x}"))),
            });
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tuple of text values and NULLs, as the server encodes it.
    fn tuple(values: &[Option<&str>]) -> Vec<u8> {
        let mut out = (values.len() as u16).to_be_bytes().to_vec();
        for v in values {
            match v {
                None => out.push(b'n'),
                Some(text) => {
                    out.push(b't');
                    out.extend((text.len() as u32).to_be_bytes());
                    out.extend(text.as_bytes());
                }
            }
        }
        out
    }

    #[test]
    fn every_change_message_decodes() {
        let mut begin = vec![b'B'];
        begin.extend(0x0152_9118u64.to_be_bytes());
        begin.extend(817_372_800_000_000i64.to_be_bytes());
        begin.extend(728u32.to_be_bytes());
        assert_eq!(
            decode(&begin).unwrap(),
            Message::Begin {
                final_lsn: 0x0152_9118,
                commit_micros: 817_372_800_000_000,
                xid: 728
            }
        );
        let mut relation = vec![b'R'];
        relation.extend(16_384u32.to_be_bytes());
        relation.extend(b"public\0rates\0d");
        relation.extend(2u16.to_be_bytes());
        relation.extend(b"\x01currency\0");
        relation.extend(25u32.to_be_bytes());
        relation.extend((-1i32).to_be_bytes());
        relation.extend(b"\x00rate\0");
        relation.extend(1700u32.to_be_bytes());
        relation.extend(655_366i32.to_be_bytes());
        assert_eq!(
            decode(&relation).unwrap(),
            Message::Relation {
                id: 16_384,
                namespace: "public".into(),
                name: "rates".into(),
                identity: b'd',
                columns: vec![("currency".into(), 25, true), ("rate".into(), 1700, false)],
            }
        );
        let mut insert = vec![b'I'];
        insert.extend(16_384u32.to_be_bytes());
        insert.push(b'N');
        insert.extend(tuple(&[Some("EUR"), None]));
        assert_eq!(
            decode(&insert).unwrap(),
            Message::Insert {
                relation: 16_384,
                new: vec![Value::Text("EUR".into()), Value::Null]
            }
        );
        let mut update = vec![b'U'];
        update.extend(16_384u32.to_be_bytes());
        update.push(b'O');
        update.extend(tuple(&[Some("EUR"), Some("1.1")]));
        update.push(b'N');
        update.extend(tuple(&[Some("EUR"), Some("1.2")]));
        let Message::Update { old, new, .. } = decode(&update).unwrap() else {
            panic!("an update")
        };
        assert_eq!(old.unwrap()[1], Value::Text("1.1".into()));
        assert_eq!(new[1], Value::Text("1.2".into()));
        let mut delete = vec![b'D'];
        delete.extend(16_384u32.to_be_bytes());
        delete.push(b'K');
        delete.extend(tuple(&[Some("EUR"), None]));
        assert!(matches!(decode(&delete).unwrap(), Message::Delete { .. }));
        let mut commit = vec![b'C', 0];
        commit.extend(1u64.to_be_bytes());
        commit.extend(2u64.to_be_bytes());
        commit.extend(3i64.to_be_bytes());
        assert_eq!(
            decode(&commit).unwrap(),
            Message::Commit {
                commit_lsn: 1,
                end_lsn: 2,
                commit_micros: 3
            }
        );
    }

    #[test]
    fn malformed_messages_are_errors_not_panics() {
        for bytes in [
            &b""[..],
            b"I",
            b"I\0\0\0\x01N\0\x01t\0\0\0\x09ab",
            b"Z",
            b"R\0\0\0\x01pub",
        ] {
            assert!(decode(bytes).is_err(), "{bytes:?}");
        }
        let mut not_utf8 = vec![b'I', 0, 0, 0, 1, b'N', 0, 1, b't', 0, 0, 0, 1];
        not_utf8.push(0xff);
        assert_eq!(
            decode(&not_utf8).unwrap_err().to_string(),
            "malformed pgoutput message: text that is not UTF-8 at byte 14"
        );
    }
}
