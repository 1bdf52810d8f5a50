//! Whole-table binary COPYs kept encoded, over the real store: a kept
//! result is served only to a transaction that reads the same rows; a
//! commit, a transaction's own writes and an older snapshot all read the
//! table again.

mod common;

use common::query;

use rocklake_sql::EncodedResults;
use rocklake_types::datum::Datum;

const COPY: &str = "COPY (SELECT \"id\", \"name\" FROM \"public\".\"t\") TO STDOUT (FORMAT binary)";

fn rows(ids: &[i64]) -> Vec<Vec<Datum>> {
    ids.iter()
        .map(|&id| vec![Datum::Int8(id), Datum::text(format!("n{id}"))])
        .collect()
}

/// The hits counted so far (the metric of the process).
fn hits() -> u64 {
    common::encoded_copies("hit")
}

#[tokio::test]
async fn a_kept_copy_is_served_only_for_the_rows_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = common::two_sessions(dir.path()).await;
    query(
        &mut a,
        "CREATE TABLE public.t (id BIGINT PRIMARY KEY, name TEXT); SELECT 1",
    )
    .await;
    query(
        &mut a,
        "INSERT INTO public.t SELECT g, 'n' || g FROM generate_series(1, 3) g; SELECT 1",
    )
    .await;

    // The first COPY reads and keeps; the second is served the same rows.
    assert_eq!(query(&mut a, COPY).await, rows(&[1, 2, 3]));
    assert!(EncodedResults::shared().kept_bytes() > 0);
    let before = hits();
    assert_eq!(query(&mut b, COPY).await, rows(&[1, 2, 3]));
    assert_eq!(hits(), before + 1, "the second COPY is served kept tuples");

    // A transaction that takes its snapshot now keeps reading these rows
    // after another session commits.
    query(&mut b, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1").await;
    assert_eq!(query(&mut b, COPY).await, rows(&[1, 2, 3]));
    query(&mut a, "INSERT INTO public.t VALUES (4, 'n4'); SELECT 1").await;
    assert_eq!(
        query(&mut a, COPY).await,
        rows(&[1, 2, 3, 4]),
        "a commit is seen"
    );
    assert_eq!(
        query(&mut b, COPY).await,
        rows(&[1, 2, 3]),
        "an older snapshot is not served the newer result"
    );
    query(&mut b, "COMMIT; SELECT 1").await;
    assert_eq!(query(&mut b, COPY).await, rows(&[1, 2, 3, 4]));

    // A transaction's own writes are in its COPY, and nobody else's.
    query(&mut a, "BEGIN; DELETE FROM public.t WHERE id = 2; SELECT 1").await;
    assert_eq!(query(&mut a, COPY).await, rows(&[1, 3, 4]));
    assert_eq!(query(&mut b, COPY).await, rows(&[1, 2, 3, 4]));
    query(&mut a, "ROLLBACK; SELECT 1").await;
    assert_eq!(query(&mut a, COPY).await, rows(&[1, 2, 3, 4]));

    // An update in place changes the rows without changing their number.
    query(
        &mut a,
        "UPDATE public.t SET name = 'x' WHERE id = 3; SELECT 1",
    )
    .await;
    let mut updated = rows(&[1, 2, 3, 4]);
    updated[2][1] = Datum::text("x");
    assert_eq!(query(&mut b, COPY).await, updated);

    // Another shape of the same table, and a text COPY, are their own.
    assert_eq!(
        query(
            &mut a,
            "COPY (SELECT \"name\" FROM \"public\".\"t\") TO STDOUT (FORMAT binary)"
        )
        .await,
        vec![
            vec![Datum::text("n1")],
            vec![Datum::text("n2")],
            vec![Datum::text("x")],
            vec![Datum::text("n4")]
        ]
    );
    let filtered = "COPY (SELECT \"id\", \"name\" FROM \"public\".\"t\" WHERE id > 3) TO STDOUT (FORMAT binary)";
    assert_eq!(query(&mut a, filtered).await, rows(&[4]));

    // Dropped and created again with other columns: nothing kept applies.
    query(
        &mut a,
        "DROP TABLE public.t; CREATE TABLE public.t (id BIGINT PRIMARY KEY, name BIGINT); SELECT 1",
    )
    .await;
    query(&mut a, "INSERT INTO public.t VALUES (7, 70); SELECT 1").await;
    assert_eq!(
        query(&mut b, COPY).await,
        vec![vec![Datum::Int8(7), Datum::Int8(70)]]
    );
}
