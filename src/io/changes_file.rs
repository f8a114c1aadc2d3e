//! A changes file: a changelog of packed rows, exactly as they were read (a text `''` stays
//! `''`, NULL stays NULL, no value is formatted or parsed), kept by a CONTINUOUS materialized
//! table to replay the rounds it read from a change stream (`postgres-cdc`).
//!
//! Layout: the line `dtemporal changes 1\n`, then per change its [`RowKind`] as one byte (its
//! position in [`RowKind::ALL`]), its row's byte length as a little-endian `u32`, and the
//! row's bytes ([`Row::as_bytes`]). A change's `seq` is not kept: a round numbers its changes
//! by their position.

use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use crate::error::Error;
use crate::operators::{Change, RowKind};
use crate::repr::Row;

/// The first line of a changes file: its kind and layout version.
const MAGIC: &[u8] = b"dtemporal changes 1\n";

/// Writes `changes` to a new file at `path` and syncs it to disk.
///
/// Errors: the file cannot be written.
pub fn write_changes(path: &Path, changes: &[Change<Row>]) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = BufWriter::new(file);
    out.write_all(MAGIC)?;
    for change in changes {
        let kind = RowKind::ALL.iter().position(|k| *k == change.kind);
        let bytes = change.row.as_bytes();
        let len = u32::try_from(bytes.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a row of 4 GiB or more"))?;
        out.write_all(&[kind.expect("one of the four kinds") as u8])?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(bytes)?;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// Reads the changes file at `path`, each change numbered by its position (from 0), each
/// row checked to hold `columns` datums.
///
/// Errors: the file cannot be read, is not a changes file, or is cut short or damaged (the
/// message names the file and the change).
pub fn read_changes(path: &Path, columns: usize) -> Result<Vec<Change<Row>>, Error> {
    let name = path.display().to_string();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| Error::io(&name, e))?;
    let damaged = |at: usize, why: &str| {
        Error::input(
            &name,
            format!("not a readable changes file (change {at}: {why})"),
        )
    };
    let mut rest = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| damaged(0, "it does not start with the changes file's first line"))?;
    let mut changes = Vec::new();
    while let [kind, tail @ ..] = rest {
        let at = changes.len();
        let kind = *RowKind::ALL
            .get(usize::from(*kind))
            .ok_or_else(|| damaged(at, "an unknown row kind"))?;
        let (len, tail) = tail
            .split_first_chunk::<4>()
            .ok_or_else(|| damaged(at, "cut short"))?;
        let len = u32::from_le_bytes(*len) as usize;
        if tail.len() < len {
            return Err(damaged(at, "cut short"));
        }
        let (row, tail) = tail.split_at(len);
        let row = Row::from_bytes(row).map_err(|e| damaged(at, &e.to_string()))?;
        if row.iter().count() != columns {
            return Err(damaged(
                at,
                &format!("a row of other than {columns} columns"),
            ));
        }
        changes.push(Change::new(at as u64, kind, row));
        rest = tail;
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repr::Datum;

    fn change(seq: u64, kind: RowKind, text: Option<&str>, n: i64) -> Change<Row> {
        let text = text.map_or(Datum::Null, Datum::Str);
        Change::new(seq, kind, Row::pack([text, Datum::Int(n)]))
    }

    #[test]
    fn changes_read_back_exactly_numbered_by_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.changes");
        let changes = vec![
            change(7, RowKind::Insert, Some(""), 1),
            change(8, RowKind::UpdateBefore, None, 2),
            change(9, RowKind::UpdateAfter, Some("a,\"b\"\n"), -3),
            change(10, RowKind::Delete, Some("é"), i64::MIN),
        ];
        write_changes(&path, &changes).unwrap();
        let read = read_changes(&path, 2).unwrap();
        let renumbered: Vec<_> = changes
            .into_iter()
            .enumerate()
            .map(|(i, c)| Change::new(i as u64, c.kind, c.row))
            .collect();
        assert_eq!(read, renumbered);
        write_changes(&path, &[]).unwrap();
        assert_eq!(read_changes(&path, 2).unwrap(), []);
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_the_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.changes");
        let changes = [
            change(0, RowKind::Insert, Some("x"), 1),
            change(1, RowKind::Insert, Some("y"), 2),
        ];
        write_changes(&path, &changes).unwrap();
        let whole = std::fs::read(&path).unwrap();
        let error = |bytes: &[u8], columns: usize| {
            std::fs::write(&path, bytes).unwrap();
            let message = read_changes(&path, columns).unwrap_err().to_string();
            message.split(": ").skip(1).collect::<Vec<_>>().join(": ")
        };
        assert_eq!(
            error(&whole[..whole.len() - 1], 2),
            "not a readable changes file (change 1: cut short)"
        );
        assert_eq!(
            error(b"op,a,b\n+I,x,1\n", 2),
            "not a readable changes file (change 0: it does not start with the changes file's first line)"
        );
        let mut odd_kind = whole.clone();
        odd_kind[MAGIC.len()] = 9;
        assert_eq!(
            error(&odd_kind, 2),
            "not a readable changes file (change 0: an unknown row kind)"
        );
        assert_eq!(
            error(&whole, 3),
            "not a readable changes file (change 0: a row of other than 3 columns)"
        );
    }
}
