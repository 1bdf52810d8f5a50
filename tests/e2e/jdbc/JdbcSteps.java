// pgJDBC steps for tests/e2e/test_jdbc.py: runs them against the server at
// the JDBC URL given as the only argument and prints one line per step (its
// result, or the SQLSTATE of its error), so that the test can compare the
// output on RockLake with the output on PostgreSQL 15.
//
// The steps cover what Java tools do with a PostgreSQL server: the
// DatabaseMetaData queries (tables, columns, keys, indexes, schemas, types),
// PreparedStatements with parameters of several types run past pgJDBC's
// prepareThreshold (5), when it switches to named server-side statements and
// binary results, batches, ResultSetMetaData, generated keys, transactions
// with savepoints, fetch sizes (portals read a few rows at a time) and errors
// followed by recovery.

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

public final class JdbcSteps {
    /** A step: returns what to print. */
    interface Step {
        Object run() throws Exception;
    }

    /** The message of the last error (printed with JDBC_STEPS_DEBUG set). */
    static String last = "";

    private JdbcSteps() {
    }

    /** Runs one step and prints `name: result` or `name: ERROR sqlstate`. */
    static void step(String name, Step body) {
        String out;
        try {
            out = String.valueOf(body.run());
        } catch (SQLException e) {
            out = "ERROR " + e.getSQLState();
            last = e.getMessage();
        } catch (Exception e) {
            out = "EXCEPTION " + e.getClass().getSimpleName() + " " + e.getMessage();
        }
        if (System.getenv("JDBC_STEPS_DEBUG") != null && out.startsWith("ERROR")) {
            out += " (" + last + ")";
        }
        System.out.println(name + ": " + out);
    }

    /** A value as text, with its Java class, arrays and byte arrays spelled out. */
    static String show(Object v) throws SQLException {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[]) {
            return "byte[]" + Arrays.toString((byte[]) v);
        }
        if (v instanceof Array) {
            Object items = ((Array) v).getArray();
            return "Array" + Arrays.deepToString((Object[]) items);
        }
        return v.getClass().getSimpleName() + ":" + v;
    }

    /** The rows of a result set, the named columns (all when none) as text. */
    static List<String> rows(ResultSet rs, String... columns) throws SQLException {
        List<String> out = new ArrayList<>();
        try (rs) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>();
                if (columns.length == 0) {
                    for (int i = 1; i <= n; i++) {
                        row.add(show(rs.getObject(i)));
                    }
                } else {
                    for (String c : columns) {
                        row.add(String.valueOf(rs.getObject(c)));
                    }
                }
                out.add(String.join("|", row));
            }
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0])) {
            metadata(c);
            preparedStatements(c);
            batchesAndKeys(c);
            resultSetMetadata(c);
            transactions(c);
            fetchSize(c);
            errors(c);
            types(c);
        }
    }

    static void metadata(Connection c) {
        DatabaseMetaData md;
        try {
            md = c.getMetaData();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        // The major version only: PostgreSQL's minor (patch) release is the
        // installed package's, RockLake reports the one it follows.
        step("product", () -> md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion()
                + " savepoints=" + md.supportsSavepoints()
                + " isolation=" + md.getDefaultTransactionIsolation()
                + " quote=" + md.getIdentifierQuoteString()
                + " schemaTerm=" + md.getSchemaTerm());
        // The database's name: the reference's databases are named per
        // test, RockLake's is `lake`; what is checked is that the one catalog
        // listed is the connection's.
        step("catalogs", () -> rows(md.getCatalogs()).equals(List.of("String:" + c.getCatalog())));
        step("schemas", () -> rows(md.getSchemas(), "TABLE_SCHEM", "TABLE_CATALOG"));
        step("table types", () -> rows(md.getTableTypes()));
        step("ddl", () -> {
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS jt");
                s.execute("CREATE TABLE jt (id bigint PRIMARY KEY, n integer NOT NULL DEFAULT 7,"
                        + " name varchar, ok boolean, at timestamp, amount numeric(10,2),"
                        + " note text DEFAULT 'none')");
                return s.getUpdateCount();
            }
        });
        step("tables", () -> rows(md.getTables(null, "public", "%", new String[] {"TABLE"}),
                "TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"));
        step("tables like", () -> rows(md.getTables(null, null, "ducklake_data%", null),
                "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE"));
        for (String table : tableNames(md)) {
            step("columns " + table, () -> rows(md.getColumns(null, "public", table, "%"),
                    "COLUMN_NAME", "TYPE_NAME", "DATA_TYPE", "COLUMN_SIZE", "DECIMAL_DIGITS",
                    "NULLABLE", "COLUMN_DEF", "ORDINAL_POSITION", "IS_NULLABLE",
                    "IS_AUTOINCREMENT", "IS_GENERATEDCOLUMN"));
        }
        step("primary keys", () -> rows(md.getPrimaryKeys(null, "public", "jt"),
                "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"));
        step("index info", () -> rows(md.getIndexInfo(null, "public", "jt", false, false),
                "TABLE_NAME", "NON_UNIQUE", "INDEX_NAME", "TYPE", "ORDINAL_POSITION",
                "COLUMN_NAME", "ASC_OR_DESC"));
        step("imported keys", () -> rows(md.getImportedKeys(null, "public", "jt")));
        // The types every client uses; PostgreSQL has many more (geometric,
        // range, text search types) that RockLake does not.
        Set<String> common = Set.of("bool", "bytea", "date", "float4", "float8", "int2", "int4",
                "int8", "numeric", "text", "time", "timestamp", "timestamptz", "uuid", "varchar",
                "_int4", "_text");
        step("type info", () -> {
            List<String> out = new ArrayList<>();
            for (String row : rows(md.getTypeInfo(), "TYPE_NAME", "DATA_TYPE", "PRECISION",
                    "NULLABLE", "CASE_SENSITIVE", "SEARCHABLE", "UNSIGNED_ATTRIBUTE")) {
                if (common.contains(row.substring(0, row.indexOf('|')))) {
                    out.add(row);
                }
            }
            return out;
        });
    }

    /** The tables getTables lists in public, sorted. */
    static List<String> tableNames(DatabaseMetaData md) {
        try {
            List<String> names = rows(md.getTables(null, "public", "%", new String[] {"TABLE"}),
                    "TABLE_NAME");
            names.sort(null);
            return names;
        } catch (SQLException e) {
            return List.of();
        }
    }

    static void preparedStatements(Connection c) throws SQLException {
        PreparedStatement insert = c.prepareStatement(
                "INSERT INTO jt (id, n, name, ok, at, amount) VALUES (?, ?, ?, ?, ?, ?)");
        for (int i = 1; i <= 8; i++) {
            final int k = i;
            step("insert " + i, () -> {
                insert.setLong(1, k);
                insert.setInt(2, k * 10);
                if (k % 3 == 0) {
                    insert.setNull(3, Types.VARCHAR);
                } else {
                    insert.setString(3, "name " + k);
                }
                insert.setBoolean(4, k % 2 == 0);
                insert.setTimestamp(5, Timestamp.valueOf("2024-01-0" + k + " 10:11:12.5"));
                insert.setBigDecimal(6, new BigDecimal(k + ".25"));
                return insert.executeUpdate();
            });
        }
        insert.close();
        PreparedStatement select = c.prepareStatement(
                "SELECT id, n, name, ok, at, amount, note FROM jt WHERE id = ? OR name = ?");
        for (int i = 1; i <= 8; i++) {
            final int k = i;
            step("select " + i, () -> {
                select.setLong(1, k);
                select.setString(2, "name 1");
                return rows(select.executeQuery());
            });
        }
        select.close();
        PreparedStatement typed = c.prepareStatement(
                "SELECT ? + 1 AS a, ? || '!' AS b, ? AS c, ?::int8 AS d, NOT ? AS e");
        for (int i = 1; i <= 7; i++) {
            final int k = i;
            step("typed " + i, () -> {
                typed.setInt(1, k);
                typed.setString(2, "s" + k);
                typed.setNull(3, Types.INTEGER);
                typed.setLong(4, 1L << (30 + k));
                typed.setBoolean(5, k % 2 == 0);
                return rows(typed.executeQuery());
            });
        }
        typed.close();
    }

    static void batchesAndKeys(Connection c) {
        step("batch", () -> {
            try (PreparedStatement p = c.prepareStatement(
                    "INSERT INTO jt (id, name) VALUES (?, ?)")) {
                for (int i = 20; i < 24; i++) {
                    p.setInt(1, i);
                    p.setString(2, "batch " + i);
                    p.addBatch();
                }
                return Arrays.toString(p.executeBatch());
            }
        });
        step("statement batch", () -> {
            try (Statement s = c.createStatement()) {
                s.addBatch("INSERT INTO jt (id, name) VALUES (30, 'thirty')");
                s.addBatch("UPDATE jt SET note = 'batched' WHERE id >= 20");
                s.addBatch("DELETE FROM jt WHERE id = 23");
                return Arrays.toString(s.executeBatch());
            }
        });
        step("generated keys by name", () -> {
            try (PreparedStatement p = c.prepareStatement(
                    "INSERT INTO jt (id, name) VALUES (?, ?)", new String[] {"id", "note"})) {
                p.setInt(1, 40);
                p.setString(2, "forty");
                int count = p.executeUpdate();
                return count + " " + rows(p.getGeneratedKeys());
            }
        });
        step("generated keys all", () -> {
            try (Statement s = c.createStatement()) {
                int count = s.executeUpdate("INSERT INTO jt (id, name) VALUES (41, 'x')",
                        Statement.RETURN_GENERATED_KEYS);
                return count + " " + rows(s.getGeneratedKeys());
            }
        });
        step("returning", () -> {
            try (PreparedStatement p = c.prepareStatement(
                    "UPDATE jt SET n = n + ? WHERE id > ? RETURNING id, n")) {
                p.setInt(1, 5);
                p.setInt(2, 39);
                return rows(p.executeQuery());
            }
        });
        step("update count", () -> {
            try (Statement s = c.createStatement()) {
                return s.executeUpdate("UPDATE jt SET ok = true WHERE id < 5") + " "
                        + s.executeUpdate("DELETE FROM jt WHERE id = 41");
            }
        });
    }

    static void resultSetMetadata(Connection c) {
        step("result metadata", () -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT id, n AS \"Count\", name, ok, at, amount,"
                         + " note, 1 + 1 AS two, id::text AS t FROM jt ORDER BY id LIMIT 1")) {
                ResultSetMetaData m = rs.getMetaData();
                List<String> out = new ArrayList<>();
                for (int i = 1; i <= m.getColumnCount(); i++) {
                    out.add(String.join("/", m.getColumnLabel(i), m.getColumnName(i),
                            String.valueOf(m.getColumnType(i)), m.getColumnTypeName(i),
                            String.valueOf(m.getPrecision(i)), String.valueOf(m.getScale(i)),
                            String.valueOf(m.isNullable(i)), String.valueOf(m.isAutoIncrement(i)),
                            m.getTableName(i), m.getSchemaName(i), m.getColumnClassName(i),
                            String.valueOf(m.getColumnDisplaySize(i))));
                }
                return out;
            }
        });
        step("parameter metadata", () -> {
            try (PreparedStatement p = c.prepareStatement(
                    "SELECT name FROM jt WHERE id = ? AND name LIKE ? AND at < ?")) {
                var m = p.getParameterMetaData();
                List<String> out = new ArrayList<>();
                for (int i = 1; i <= m.getParameterCount(); i++) {
                    out.add(m.getParameterTypeName(i) + "/" + m.getParameterType(i));
                }
                return out + " " + p.getMetaData().getColumnTypeName(1);
            }
        });
    }

    static void transactions(Connection c) throws SQLException {
        step("rollback", () -> {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO jt (id, name) VALUES (100, 'rolled back')");
                c.rollback();
                return rows(s.executeQuery("SELECT count(*) FROM jt WHERE id = 100"));
            }
        });
        step("commit", () -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO jt (id, name) VALUES (101, 'committed')");
                c.commit();
                return rows(s.executeQuery("SELECT name FROM jt WHERE id = 101"));
            }
        });
        step("savepoint around a failed read", () -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO jt (id, name) VALUES (103, 'kept too')");
                Savepoint sp = c.setSavepoint("before_read");
                String error;
                try {
                    s.executeQuery("SELECT nope FROM jt");
                    error = "none";
                } catch (SQLException e) {
                    error = e.getSQLState();
                }
                c.rollback(sp);
                c.commit();
                return error + " " + rows(s.executeQuery("SELECT id, name FROM jt WHERE id = 103"));
            }
        });
        step("savepoint around a failed insert", () -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO jt (id, name) VALUES (102, 'kept')");
                Savepoint sp = c.setSavepoint("before_error");
                String error;
                try {
                    s.executeUpdate("INSERT INTO jt (id, name) VALUES (102, 'duplicate')");
                    error = "none";
                } catch (SQLException e) {
                    error = e.getSQLState();
                }
                try {
                    c.rollback(sp);
                } catch (SQLException e) {
                    c.rollback();
                    throw e;
                }
                c.releaseSavepoint(sp);
                Savepoint unnamed = c.setSavepoint();
                c.releaseSavepoint(unnamed);
                c.commit();
                return error + " " + rows(s.executeQuery("SELECT id, name FROM jt WHERE id = 102"));
            }
        });
        // The rows later steps list do not depend on how the step above ended.
        step("clean up", () -> {
            c.rollback();
            try (Statement s = c.createStatement()) {
                int n = s.executeUpdate("DELETE FROM jt WHERE id = 102");
                c.commit();
                return n >= 0;
            }
        });
        step("isolation", () -> {
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement s = c.createStatement()) {
                List<String> level = rows(s.executeQuery("SHOW transaction_isolation"));
                c.commit();
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                return level + " " + c.getTransactionIsolation();
            }
        });
        step("read only", () -> {
            c.setReadOnly(true);
            try (Statement s = c.createStatement()) {
                List<String> ro = rows(s.executeQuery("SHOW transaction_read_only"));
                c.commit();
                c.setReadOnly(false);
                return ro;
            }
        });
        c.setAutoCommit(true);
    }

    static void fetchSize(Connection c) throws SQLException {
        c.setAutoCommit(false);
        step("fetch size", () -> {
            try (Statement s = c.createStatement()) {
                s.setFetchSize(3);
                List<String> out = rows(s.executeQuery("SELECT id, name FROM jt ORDER BY id"));
                out.addAll(rows(s.executeQuery("SELECT g FROM generate_series(1, 8) g")));
                return out;
            }
        });
        step("fetch size prepared", () -> {
            try (PreparedStatement p = c.prepareStatement("SELECT id FROM jt WHERE id > ? ORDER BY id")) {
                p.setFetchSize(2);
                List<String> out = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    p.setInt(1, i);
                    out.add(String.valueOf(rows(p.executeQuery())));
                }
                return out;
            }
        });
        c.commit();
        c.setAutoCommit(true);
    }

    static void errors(Connection c) throws SQLException {
        String[] failing = {"SELECT nope FROM jt", "INSERT INTO jt (id) VALUES (1)",
            "SELECT 1 / 0", "SELECT * FROM no_such_table", "SELEC 1",
            "INSERT INTO jt (id, n) VALUES (500, NULL)"};
        for (String sql : failing) {
            step("error " + sql, () -> {
                try (Statement s = c.createStatement()) {
                    s.execute(sql);
                    return "no error";
                }
            });
        }
        step("after errors", () -> {
            try (Statement s = c.createStatement()) {
                return rows(s.executeQuery("SELECT count(*) FROM jt"));
            }
        });
        c.setAutoCommit(false);
        step("error in transaction", () -> {
            try (Statement s = c.createStatement()) {
                String first;
                try {
                    s.execute("SELECT nope FROM jt");
                    first = "no error";
                } catch (SQLException e) {
                    first = e.getSQLState();
                }
                String second;
                try {
                    s.execute("SELECT 1");
                    second = "no error";
                } catch (SQLException e) {
                    second = e.getSQLState();
                }
                c.rollback();
                return first + " " + second + " " + rows(s.executeQuery("SELECT 2"));
            }
        });
        c.rollback();
        c.setAutoCommit(true);
        step("prepared error", () -> {
            try (PreparedStatement p = c.prepareStatement("SELECT 10 / ?")) {
                List<String> out = new ArrayList<>();
                for (int i = 2; i >= -7; i--) {
                    p.setInt(1, i == -7 ? 0 : i);
                    try {
                        out.add(String.valueOf(rows(p.executeQuery())));
                    } catch (SQLException e) {
                        out.add(e.getSQLState());
                    }
                }
                return out;
            }
        });
    }

    static void types(Connection c) throws SQLException {
        String sql = "SELECT 1::int2, 2::int4, 3::int8, 1.5::float4, 2.25::float8,"
                + " 12.345::numeric(10,3), 'x'::text, 'y'::varchar, true, '2024-01-02'::date,"
                + " '03:04:05'::time, '2024-01-02 03:04:05.25'::timestamp,"
                + " '2024-01-02 03:04:05+00'::timestamptz, '\\x0102ff'::bytea, ARRAY[1, 2],"
                + " ARRAY['a', NULL], 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid,"
                + " NULL::int4, ?::int4 AS p";
        try (PreparedStatement p = c.prepareStatement(sql)) {
            for (int i = 1; i <= 7; i++) {
                final int k = i;
                step("types " + i, () -> {
                    p.setInt(1, k);
                    return rows(p.executeQuery());
                });
            }
        }
        step("get as", () -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT 42, '7', 2.5, 't', '2024-03-04 05:06:07'")) {
                rs.next();
                return rs.getString(1) + " " + rs.getLong(1) + " " + rs.getInt(2) + " "
                        + rs.getBigDecimal(3) + " " + rs.getDouble(3) + " " + rs.getBoolean(4)
                        + " " + rs.getTimestamp(5);
            }
        });
    }
}
