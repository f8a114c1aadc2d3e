//! Hostile input to the warehouse (issue 45): table names that look like paths, a catalog
//! restored from an older copy or written by a version 1 build with such names, damaged
//! snapshot files. Each row gives the right answer or an error naming the object, and nothing
//! outside the warehouse changes: a sibling directory is compared byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use differential_temporal::table::tempfile_dir::Dir;
use differential_temporal::table::TableEnv;

use super::{message, rows, text};

/// Every file and directory under `root` (relative paths), with each file's bytes.
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            if path.is_dir() {
                stack.push(path);
                out.insert(relative, None);
            } else {
                out.insert(relative, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// A directory `top` holding a sibling of the warehouse (`top/a/b/victim`, two files) and a
/// source table's file; the warehouse is `top/a/b/wh`, so `data/../../victim` is the sibling.
struct Site {
    dir: Dir,
}

impl Site {
    fn new() -> Site {
        let dir = Dir::new();
        std::fs::create_dir_all(dir.path("a/b/victim/inner")).unwrap();
        dir.write("a/b/victim/keep.txt", "precious\n");
        dir.write("a/b/victim/inner/CURRENT", "manifest-0.json\n");
        dir.write("src.csv", "k,v\n1,x\n2,\n");
        Site { dir }
    }

    fn warehouse(&self) -> String {
        self.dir.path("a/b/wh")
    }

    /// Everything outside the warehouse.
    fn outside(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut all = tree(Path::new(&self.dir.path("")));
        all.retain(|path, _| !path.starts_with("a/b/wh"));
        all
    }

    fn env(&self) -> TableEnv {
        let env = TableEnv::new().with_warehouse(self.warehouse()).unwrap();
        if !env.is_registered("src") {
            env.execute_sql(&format!(
                "CREATE TABLE src (k BIGINT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv')",
                self.dir.path("src.csv")
            ))
            .unwrap();
        }
        env
    }

    /// The names under the warehouse's `data/`, sorted.
    fn data(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(format!("{}/data", self.warehouse()))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// `name` as a quoted identifier.
fn quoted(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Names that are paths, or would be if a name were used as one: each is a table like any
/// other, stored in a directory the warehouse chose, read back, reopened, dropped, and the
/// sibling directory stays as it was.
#[test]
fn names_are_never_paths() {
    let site = Site::new();
    let before = site.outside();
    let victim = site.dir.path("a/b/victim");
    let long = "n".repeat(300);
    let names: [(&str, &str); 9] = [
        ("../../victim", "%2E%2E%2F%2E%2E%2Fvictim"),
        (&victim, ""),
        ("..", "%2E%2E"),
        (".", "%2E"),
        ("a/b", "a%2Fb"),
        ("a\u{0}b", "a%00b"),
        ("%2E%2E", "%252E%252E"),
        (&long, ""),
        ("daily totals", "daily%20totals"),
    ];
    for (name, dir) in names {
        let env = site.env();
        let t = quoted(name);
        env.execute_sql(&format!(
            "CREATE MATERIALIZED TABLE {t} FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT k, v FROM src"
        ))
        .unwrap_or_else(|e| panic!("{name:?}: {e}"));
        text(&env, &format!("ALTER MATERIALIZED TABLE {t} REFRESH"));
        assert_eq!(
            rows(&env, &format!("SELECT * FROM {t}")),
            ["1,x", "2,"],
            "{name:?}"
        );
        let data = site.data();
        assert_eq!(data.len(), 1, "{name:?}: {data:?}");
        if !dir.is_empty() {
            assert_eq!(data, [dir], "{name:?}");
        }
        assert!(data[0].len() <= 200 && !data[0].contains(['/', '.']) || name == long);
        let reopened = site.env();
        assert_eq!(
            rows(&reopened, &format!("SELECT * FROM {t}")),
            ["1,x", "2,"],
            "{name:?}"
        );
        reopened
            .execute_sql(&format!("DROP MATERIALIZED TABLE {t}"))
            .unwrap();
        assert_eq!(site.data(), Vec::<String>::new(), "{name:?}");
        assert_eq!(
            site.outside(),
            before,
            "{name:?}: something outside the warehouse changed"
        );
    }
}

/// Two tables, a catalog copy taken when there was one: restoring it leaves the other's data
/// in place (reported, kept) for every process that opens the warehouse, a reader whose
/// statement fails included; `dtemporal warehouse --remove-unknown` removes it, and refuses a
/// table's own directory.
#[test]
fn a_restored_catalog_deletes_nothing_it_does_not_name() {
    let site = Site::new();
    let env = site.env();
    let create = |name: &str| {
        env.execute_sql(&format!(
            "CREATE MATERIALIZED TABLE {name} FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT k, v FROM src"
        ))
        .unwrap();
        text(&env, &format!("ALTER MATERIALIZED TABLE {name} REFRESH"));
    };
    create("first");
    let catalog = format!("{}/catalog.json", site.warehouse());
    let old = std::fs::read(&catalog).unwrap();
    create("second");
    let kept = tree(Path::new(&format!("{}/data/second", site.warehouse())));
    std::fs::write(&catalog, &old).unwrap();
    let dtemporal = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dtemporal"))
            .args(args)
            .output()
            .unwrap()
    };
    let wh = site.warehouse();
    let reader = dtemporal(&["sql", "--warehouse", &wh, "-e", "SELEC nonsense"]);
    assert!(!reader.status.success());
    let stderr = String::from_utf8_lossy(&reader.stderr);
    assert!(
        stderr.contains(&format!(
            "{wh}/data/second: not a table of the catalog {wh}/catalog.json; kept"
        )),
        "{stderr}"
    );
    let reopened = site.env();
    assert_eq!(rows(&reopened, "SELECT * FROM first"), ["1,x", "2,"]);
    assert_eq!(site.data(), ["first", "second"]);
    assert_eq!(tree(Path::new(&format!("{wh}/data/second"))), kept);
    let refused = dtemporal(&["warehouse", "--warehouse", &wh, "--remove-unknown", "first"]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.ends_with(&format!("\ndtemporal: error: {wh}/data/first: the data directory of a table of the catalog (drop the table instead)\n")),
        "{stderr}"
    );
    let refused = dtemporal(&["warehouse", "--warehouse", &wh, "--remove-unknown", ".."]);
    assert_eq!(refused.status.code(), Some(2));
    let removed = dtemporal(&[
        "warehouse",
        "--warehouse",
        &wh,
        "--remove-unknown",
        "second",
    ]);
    assert!(
        removed.status.success(),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
    assert_eq!(site.data(), ["first"]);
    assert_eq!(rows(&reopened, "SELECT * FROM first"), ["1,x", "2,"]);
}

/// A catalog of version 1 (no layouts: tables at `data/<name>`) keeps opening; one whose
/// table name is not a directory name (`..`, written by a build that took names for paths) is
/// refused for that table alone, naming it, and nothing is read or written through it.
#[test]
fn a_version_1_catalog_reads_its_tables_where_they_are_and_refuses_path_names() {
    let site = Site::new();
    let env = site.env();
    env.execute_sql(
        "CREATE MATERIALIZED TABLE plain FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT k, v FROM src",
    )
    .unwrap();
    text(&env, "ALTER MATERIALIZED TABLE plain REFRESH");
    let catalog = format!("{}/catalog.json", site.warehouse());
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&catalog).unwrap()).unwrap();
    json["version"] = 1.into();
    let tables = json["materialized"].as_object_mut().unwrap();
    let mut entry = tables.remove("plain").unwrap();
    entry.as_object_mut().unwrap().remove("layout");
    tables.insert("plain".into(), entry.clone());
    tables.insert("../../victim".into(), entry);
    std::fs::write(&catalog, serde_json::to_vec(&json).unwrap()).unwrap();
    let before = site.outside();

    let reopened = site.env();
    assert_eq!(rows(&reopened, "SELECT * FROM plain"), ["1,x", "2,"]);
    let wh = site.warehouse();
    let refused = format!("{wh}/catalog.json: materialized table \"../../victim\": its data directory \"../../victim\" is not a directory name inside the warehouse (the table is not read; drop it or restore its entry)");
    let e = reopened
        .execute_sql("SELECT * FROM `../../victim`")
        .unwrap_err();
    assert_eq!(message(e), refused);
    let e = reopened
        .execute_sql("ALTER MATERIALIZED TABLE `../../victim` REFRESH")
        .unwrap_err();
    assert_eq!(message(e), refused);
    reopened
        .execute_sql("DROP MATERIALIZED TABLE `../../victim`")
        .unwrap();
    assert_eq!(site.outside(), before);
    assert_eq!(site.data(), ["plain"]);
    // The next change writes version 2, the old table still where it was.
    text(&reopened, "ALTER MATERIALIZED TABLE plain REFRESH");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&catalog).unwrap()).unwrap();
    assert_eq!(json["version"], 2);
    assert_eq!(json["materialized"]["plain"]["layout"], "by_name");
    assert_eq!(rows(&site.env(), "SELECT * FROM plain"), ["1,x", "2,"]);
}

/// A warehouse with two refreshed tables, `damaged` and `intact`; returns the data file of
/// `damaged`'s snapshot 1 and its bytes.
fn two_tables(site: &Site) -> (String, Vec<u8>) {
    let env = site.env();
    for name in ["damaged", "intact"] {
        env.execute_sql(&format!(
            "CREATE MATERIALIZED TABLE {name} FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT k, v FROM src"
        ))
        .unwrap();
        text(&env, &format!("ALTER MATERIALIZED TABLE {name} REFRESH"));
    }
    let file = format!("{}/data/damaged/snap-1/part-0.csv", site.warehouse());
    let bytes = std::fs::read(&file).unwrap();
    (file, bytes)
}

/// Damaged, cut, extended and stray snapshot files and a damaged manifest: reading the
/// damaged table is an error naming the file and the snapshot, the other table reads as it
/// was, and reopening the warehouse works.
#[test]
fn damaged_snapshot_files_are_refused_naming_them() {
    let cases: [(&str, fn(&str, &[u8]), &str); 5] = [
        (
            "one byte changed",
            |file, bytes| {
                let mut changed = bytes.to_vec();
                let at = changed.len() - 2;
                changed[at] = b'9';
                std::fs::write(file, changed).unwrap();
            },
            "WH/data/damaged/snap-1/part-0.csv: corrupted warehouse file: data file of snapshot 1 does not match its manifest's checksum",
        ),
        (
            "cut at a row boundary",
            |file, bytes| std::fs::write(file, &bytes[..8]).unwrap(),
            "WH/data/damaged/snap-1/part-0.csv: corrupted warehouse file: data file of snapshot 1 holds 8 bytes, its manifest WH/data/damaged/manifest-1.json records 13",
        ),
        (
            "a row appended",
            |file, bytes| std::fs::write(file, [bytes, b"3,y\n"].concat()).unwrap(),
            "WH/data/damaged/snap-1/part-0.csv: corrupted warehouse file: data file of snapshot 1 holds 17 bytes, its manifest WH/data/damaged/manifest-1.json records 13",
        ),
        (
            "a stray file",
            |file, bytes| std::fs::write(file.replace("part-0", "part-1"), bytes).unwrap(),
            "WH/data/damaged/snap-1/part-1.csv: corrupted warehouse file: a file in snapshot 1 that its manifest WH/data/damaged/manifest-1.json does not name",
        ),
        (
            "a damaged manifest",
            |file, _| {
                let manifest = file.replace("snap-1/part-0.csv", "manifest-1.json");
                std::fs::write(manifest, "{\"snapshot_id\": 1").unwrap()
            },
            "WH/data/damaged/manifest-1.json: corrupted warehouse file: not a snapshot manifest: EOF while parsing an object at line 1 column 17",
        ),
    ];
    for (case, damage, expected) in cases {
        let site = Site::new();
        let (file, bytes) = two_tables(&site);
        assert_eq!(bytes, b"k,v\n1,x\n2,\\N\n", "{case}");
        damage(&file, &bytes);
        let reopened = site.env();
        let e = reopened.execute_sql("SELECT * FROM damaged").unwrap_err();
        let e = message(e).replace(&site.warehouse(), "WH");
        assert!(e.starts_with(expected), "{case}: {e}");
        assert_eq!(
            rows(&reopened, "SELECT * FROM intact"),
            ["1,x", "2,"],
            "{case}"
        );
    }
}

/// Old snapshots (format 1, no sizes or checksums in the manifest) keep reading as they did,
/// an empty cell as NULL, and a partition refresh carries their files into format 2.
#[test]
fn snapshots_of_format_1_still_read() {
    let site = Site::new();
    let (file, _) = two_tables(&site);
    let manifest = file.replace("snap-1/part-0.csv", "manifest-1.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let object = json.as_object_mut().unwrap();
    object.remove("format");
    for file in object["files"].as_array_mut().unwrap() {
        file.as_object_mut().unwrap().remove("size");
        file.as_object_mut().unwrap().remove("crc32");
    }
    std::fs::write(&manifest, serde_json::to_vec(&json).unwrap()).unwrap();
    std::fs::write(&file, "k,v\n1,x\n2,\n3,\\q\n").unwrap();
    let env = site.env();
    assert_eq!(
        rows(&env, "SELECT k, v IS NULL, v FROM damaged"),
        ["1,false,x", "2,true,", "3,false,\\q"]
    );
}

/// Every kind of value reads back from a materialized table as the query gave it: the empty
/// string (not NULL), text with delimiters, quotes, newlines and backslashes (`\N` too), NaN,
/// infinities, -0.0, extreme decimals and timestamps.
#[test]
fn values_read_back_exactly() {
    let site = Site::new();
    site.dir.write(
        "values.csv",
        "k,d,m,ts\n1,NaN,-99999999999999999999999999.9999999999,0001-01-01 00:00:00.000000001\n2,-0.0,0.0000000001,9999-12-31 23:59:59.999999999\n3,Infinity,,\n4,-Infinity,1,1970-01-01 00:00:00\n5,,,\n",
    );
    let env = site.env();
    env.execute_sql(&format!(
        "CREATE TABLE vals (k INT, d DOUBLE, m DECIMAL(36, 10), ts TIMESTAMP(9))
           WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE VIEW v AS SELECT k,
             CASE k WHEN 1 THEN '' WHEN 2 THEN 'a,b;\"c\"' WHEN 3 THEN 'line
two' WHEN 4 THEN '\\N' ELSE '\\\\x' END AS s,
             CASE WHEN k = 5 THEN CAST(NULL AS STRING) ELSE '' END AS e,
             d, CAST(d AS FLOAT) AS f, m, ts
           FROM vals;
         CREATE MATERIALIZED TABLE mt FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT * FROM v;",
        site.dir.path("values.csv")
    ))
    .unwrap();
    text(&env, "ALTER MATERIALIZED TABLE mt REFRESH");
    let shape = "SELECT k, s IS NULL, CHAR_LENGTH(s), s, e IS NULL, CHAR_LENGTH(e), d, d IS NULL, f, m, m IS NULL, ts, ts IS NULL FROM ";
    let expected = rows(&env, &format!("{shape} v"));
    assert_eq!(
        expected,
        [
            "1,false,0,,false,0,NaN,false,NaN,-99999999999999999999999999.9999999999,false,0001-01-01 00:00:00.000000001,false",
            "2,false,7,a,b;\"c\",false,0,-0.0,false,-0.0,0.0000000001,false,9999-12-31 23:59:59.999999999,false",
            "3,false,8,line\ntwo,false,0,Infinity,false,Infinity,,true,,true",
            "4,false,2,\\N,false,0,-Infinity,false,-Infinity,1.0000000000,false,1970-01-01 00:00:00.000000000,false",
            "5,false,3,\\\\x,true,,,true,,,true,,true",
        ]
    );
    assert_eq!(rows(&env, &format!("{shape} mt")), expected);
    assert_eq!(rows(&site.env(), &format!("{shape} mt")), expected);
}

/// A value that a read would refuse (a timestamp past year 9999) is refused when written,
/// naming the row and the column; the table keeps its last snapshot.
#[test]
fn a_value_a_read_would_refuse_is_not_published() {
    let site = Site::new();
    site.dir.write("late.csv", "k,ts\n1,9999-12-31 12:00:00\n");
    let env = site.env();
    env.execute_sql(&format!(
        "CREATE TABLE late (k INT, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'csv');
         CREATE MATERIALIZED TABLE beyond FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL
           AS SELECT k, ts + INTERVAL '1' DAY AS ts FROM late;",
        site.dir.path("late.csv")
    ))
    .unwrap();
    let e = env
        .execute_sql("ALTER MATERIALIZED TABLE beyond REFRESH")
        .unwrap_err();
    let e = message(e).replace(&site.warehouse(), "WH");
    assert!(
        e.starts_with("WH/data/beyond/.snap-1.tmp/part-0.csv: row 1 ("),
        "{e}"
    );
    assert!(
        e.contains("column \"ts\": the value would not read back"),
        "{e}"
    );
    assert_eq!(rows(&env, "SELECT * FROM beyond"), Vec::<String>::new());
}

/// A plain reader deletes nothing (issue 45): over a warehouse holding a leftover of each
/// kind (a refresh's temporary directory and manifest, a snapshot older than the previous one,
/// a DROP cut before saving the catalog, whose `.staged-` directory the catalog still names, as
/// a CREATE cut after saving it leaves, a staged directory the catalog does not name, a
/// directory it does not know), `dtemporal sql` reads the right rows and leaves the warehouse
/// byte for byte as it was. The next statement that changes the warehouse recovers it, under
/// the lock: the staged table put back, the other leftovers removed, the unknown one kept.
#[test]
fn a_reader_deletes_nothing_and_the_next_change_recovers() {
    let site = Site::new();
    let env = site.env();
    for name in ["t", "dropping"] {
        env.execute_sql(&format!(
            "CREATE MATERIALIZED TABLE {name} FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS SELECT k, v FROM src"
        ))
        .unwrap();
        text(&env, &format!("ALTER MATERIALIZED TABLE {name} REFRESH"));
    }
    text(&env, "ALTER MATERIALIZED TABLE t REFRESH");
    let wh = site.warehouse();
    let t = format!("{wh}/data/t");
    std::fs::create_dir_all(format!("{t}/.snap-3.tmp")).unwrap();
    std::fs::write(format!("{t}/.snap-3.tmp/part-0.csv"), "k,v\n9,z\n").unwrap();
    std::fs::write(format!("{t}/.manifest-3.json.tmp-99"), "{").unwrap();
    std::fs::create_dir_all(format!("{t}/snap-0")).unwrap();
    std::fs::write(format!("{t}/snap-0/part-0.csv"), "k,v\n").unwrap();
    std::fs::write(format!("{t}/manifest-0.json"), "{}").unwrap();
    std::fs::rename(
        format!("{wh}/data/dropping"),
        format!("{wh}/data/.staged-dropping"),
    )
    .unwrap();
    std::fs::create_dir_all(format!("{wh}/data/.staged-gone/snap-0")).unwrap();
    std::fs::create_dir_all(format!("{wh}/data/stranger")).unwrap();
    let before = tree(Path::new(&wh));

    let reader = Command::new(env!("CARGO_BIN_EXE_dtemporal"))
        .args(["sql", "--quiet", "--warehouse", &wh, "-e"])
        .arg("SELECT v FROM t WHERE k = 1; SELECT k FROM dropping WHERE v IS NULL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&reader.stderr);
    assert!(reader.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&reader.stdout),
        "op,v\n+I,x\nop,k\n+I,2\n"
    );
    assert!(
        stderr.contains(&format!("{wh}/data/stranger: not a table of the catalog")),
        "{stderr}"
    );
    assert_eq!(
        tree(Path::new(&wh)),
        before,
        "the reader changed the warehouse"
    );

    site.env()
        .execute_sql("CREATE VIEW w AS SELECT k FROM src")
        .unwrap();
    assert_eq!(site.data(), ["dropping", "stranger", "t"]);
    let mut left: Vec<String> = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "CURRENT",
            "manifest-1.json",
            "manifest-2.json",
            "snap-1",
            "snap-2"
        ]
    );
    let reopened = site.env();
    assert_eq!(rows(&reopened, "SELECT * FROM t"), ["1,x", "2,"]);
    assert_eq!(rows(&reopened, "SELECT * FROM dropping"), ["1,x", "2,"]);
}

/// A partition refresh over a snapshot of format 1 carries the other partitions' files into
/// format 2, their NULLs still NULL.
#[test]
fn a_refresh_rewrites_kept_files_of_format_1() {
    let site = Site::new();
    let env = site.env();
    env.execute_sql(
        "CREATE MATERIALIZED TABLE parts PARTITIONED BY (p) FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL
           AS SELECT CAST(k AS STRING) AS p, v FROM src",
    )
    .unwrap();
    text(&env, "ALTER MATERIALIZED TABLE parts REFRESH");
    let table = format!("{}/data/parts", site.warehouse());
    let manifest = format!("{table}/manifest-1.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("format");
    let mut kept = String::new();
    for file in json["files"].as_array_mut().unwrap() {
        let file = file.as_object_mut().unwrap();
        file.remove("size");
        file.remove("crc32");
        let name = file["name"].as_str().unwrap().to_string();
        let text = if file["partition"][0][1] == "2" {
            kept = name.clone();
            "p,v\n2,\n"
        } else {
            "p,v\n1,x\n"
        };
        std::fs::write(format!("{table}/snap-1/{name}"), text).unwrap();
    }
    std::fs::write(&manifest, serde_json::to_vec(&json).unwrap()).unwrap();
    assert!(!kept.is_empty());
    let env = site.env();
    text(
        &env,
        "ALTER MATERIALIZED TABLE parts REFRESH PARTITION (p = '1')",
    );
    assert_eq!(
        rows(&env, "SELECT p, v IS NULL, v FROM parts"),
        ["1,false,x", "2,true,"]
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(format!("{table}/manifest-2.json")).unwrap())
            .unwrap();
    assert_eq!(json["format"], 2);
    let files = json["files"].as_array().unwrap();
    let converted = files.iter().find(|f| f["partition"][0][1] == "2").unwrap();
    let name = converted["name"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(format!("{table}/snap-2/{name}")).unwrap(),
        "p,v\n2,\\N\n"
    );
    assert_eq!(converted["size"], 9);
}
