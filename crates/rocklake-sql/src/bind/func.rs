//! Binding of function calls: scalar functions, constant functions (NOW(),
//! version(), ...) and aggregates.

use rocklake_types::datum::{Datum, PgType};
use rocklake_types::value::zone::with_session_zone;
use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments,
    ObjectNamePart, OrderByExpr,
};

use crate::bind::Binder;
use crate::ident::fold;
use crate::plan::{common_type, AggCall, AggFunc, BExpr, Func, ScanReq, ScanSource, Ty};
use crate::storage::ScanFilter;

/// PostgreSQL's number of the UTF8 encoding (`pg_database.encoding`).
use rocklake_types::settings::version_string;
use rocklake_types::{SqlError, SqlState};

impl Binder<'_> {
    pub(crate) fn bind_text_arg(&mut self, e: &Expr) -> Result<BExpr, SqlError> {
        let (b, t) = self.bind_expr(e)?;
        self.coerce(b, &t, &PgType::Text, "function argument")
    }

    pub(crate) fn bind_typed_arg(&mut self, e: &Expr, to: &PgType) -> Result<BExpr, SqlError> {
        let (b, t) = self.bind_expr(e)?;
        self.coerce(b, &t, to, "function argument")
    }

    /// A function call: an aggregate of this query level, or a scalar
    /// function.
    pub(crate) fn bind_function(&mut self, f: &Function) -> Result<(BExpr, Ty), SqlError> {
        if let Some(items) = super::rows::row_items(f) {
            return self.bind_row(&items?);
        }
        if let Some(with_rows) = super::rows::with_whole_rows(f) {
            return self.bind_function(&with_rows);
        }
        let name = function_name(f)?;
        if let (FunctionArguments::Subquery(q), "array") = (&f.args, name.as_str()) {
            return self.bind_array_subquery(q);
        }

        let CallArguments {
            args,
            named,
            distinct,
            star,
            order_by,
        } = call_arguments(f)?;
        if !named.is_empty() {
            return self
                .bind_named_call(&name, &args, &named)
                .unwrap_or_else(|| {
                    Err(SqlError::unsupported(format!(
                        "named arguments are not supported by {name}()"
                    )))
                });
        }
        if f.over.is_some() {
            if !order_by.is_empty() {
                return Err(SqlError::unsupported(format!(
                    "ORDER BY inside window function calls is not supported: {f}"
                )));
            }
            return self.bind_window_call(f, &name, &args, star, distinct);
        }
        let agg = match name.as_str() {
            "count" if star => Some(AggFunc::CountStar),
            "count" => Some(AggFunc::Count),
            other => crate::plan::aggregate_named(other),
        };
        let ordered_set = agg.is_some_and(AggFunc::is_ordered_set);
        if ordered_set && f.within_group.is_empty() {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("WITHIN GROUP is required for ordered-set aggregate {name}"),
            ));
        }
        if !ordered_set && !f.within_group.is_empty() {
            // No aggregate of this name takes a sort key as an argument.
            let keys = f.within_group.iter().map(|o| &o.expr);
            let mut shown = Vec::new();
            let saved = self.agg.take();
            for arg in args.iter().copied().chain(keys) {
                let bound = self.bind_expr(arg);
                let t = match bound {
                    Ok((_, t)) => t,
                    Err(error) => {
                        self.agg = saved;
                        return Err(error);
                    }
                };
                shown.push(
                    t.as_ref()
                        .map_or("unknown", PgType::display_name)
                        .to_string(),
                );
            }
            self.agg = saved;
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", shown.join(", ")),
            )
            .with_hint(
                "No function matches the given name and argument types. You might need to add \
                 explicit type casts.",
            ));
        }
        // An ordered-set aggregate's input is its WITHIN GROUP key, then
        // its direct arguments; the key also orders it.
        let mut args = args;
        if ordered_set {
            if f.within_group.len() != 1 {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "function {name} with {} sort keys does not exist",
                        f.within_group.len()
                    ),
                ));
            }
            args.insert(0, &f.within_group[0].expr);
        }
        let order_by = if ordered_set {
            f.within_group.clone()
        } else {
            order_by
        };
        let modifiers = AggModifiers {
            distinct,
            order_by: &order_by,
            filter: f.filter.as_deref(),
        };
        match agg {
            Some(func) => self.bind_aggregate(func, &args, modifiers),
            None if f.filter.is_some() || distinct || !order_by.is_empty() => {
                Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("DISTINCT, ORDER BY or FILTER specified, but {name} is not an aggregate function"),
                ))
            }
            None if super::arrays::is_set_function(&name) => self.bind_set_call(&name, &args),
            None => match self.bind_library_function(&name, &args) {
                Some(bound) => bound,
                None => self.bind_scalar_function(&name, &args),
            },
        }
    }

    /// SQL's `TRIM([BOTH | LEADING | TRAILING] [characters] FROM string)`:
    /// the library's `btrim`, `ltrim` or `rtrim`.
    pub(super) fn bind_trim(
        &mut self,
        name: &str,
        string: &Expr,
        characters: Option<&Expr>,
    ) -> Result<(BExpr, Ty), SqlError> {
        let mut args = vec![string];
        args.extend(characters);
        self.bind_library_function(name, &args)
            .expect("the library has the trim functions")
    }

    /// A scalar function call by (folded) name.
    fn bind_scalar_function(
        &mut self,
        name: &str,
        args: &[&Expr],
    ) -> Result<(BExpr, Ty), SqlError> {
        let argc = args.len();
        let konst = |d: Datum, t: PgType| Ok((BExpr::Const(d), Some(t)));
        match (name, argc) {
            ("now" | "current_timestamp" | "transaction_timestamp" | "statement_timestamp", 0) => {
                self.reads_time = true;
                konst(Datum::TimestampTz(self.now), PgType::TimestampTz)
            }
            // The local date and time in the session's zone.
            ("current_date", 0) => {
                self.reads_time = true;
                let days = self.local_now().div_euclid(86_400_000_000);
                konst(Datum::Date(days as i32), PgType::Date)
            }
            ("localtimestamp", 0) => {
                self.reads_time = true;
                konst(Datum::Timestamp(self.local_now()), PgType::Timestamp)
            }
            ("localtime", 0) => {
                self.reads_time = true;
                konst(
                    Datum::Time(self.local_now().rem_euclid(86_400_000_000)),
                    PgType::Time,
                )
            }
            ("current_time", 0) => {
                self.reads_time = true;
                let micros = self.local_now().rem_euclid(86_400_000_000);
                let east = with_session_zone(|zone| zone.offset_at(self.now));
                konst(
                    Datum::TimeTz {
                        micros,
                        offset_west_secs: -east,
                    },
                    PgType::TimeTz,
                )
            }
            ("version", 0) => konst(Datum::text(version_string()), PgType::Text),
            ("current_schema", 0) => konst(Datum::Text("public".into()), PgType::Name),
            ("current_schemas", 1) => {
                // The search path is PostgreSQL's default (`"$user", public`
                // with no schema named after the user): with the implicit
                // schemas, pg_catalog comes first.
                let (a, t) = self.bind_expr(args[0])?;
                let implicit = self.coerce(a, &t, &PgType::Bool, "current_schemas")?;
                let names = |list: &[&str]| {
                    BExpr::Const(Datum::array(
                        list.iter()
                            .map(|n| Datum::Text((*n).into()))
                            .collect::<Vec<_>>(),
                    ))
                };
                let with = names(&["pg_catalog", "public"]);
                let without = names(&["public"]);
                Ok((
                    BExpr::Case {
                        operand: None,
                        whens: vec![(implicit.clone(), with)],
                        otherwise: Some(Box::new(BExpr::Case {
                            operand: None,
                            whens: vec![(
                                BExpr::IsNull(Box::new(implicit), false),
                                BExpr::Const(Datum::Null),
                            )],
                            otherwise: Some(Box::new(without)),
                        })),
                    },
                    Some(PgType::array_of(PgType::Name)),
                ))
            }
            ("current_database" | "current_catalog", 0) => {
                konst(Datum::text(self.cat.database.clone()), PgType::Name)
            }
            ("current_user" | "current_role" | "user", 0) => konst(
                Datum::text(self.cat.roles.identity.current().to_string()),
                PgType::Name,
            ),
            ("session_user", 0) => konst(
                Datum::text(self.cat.roles.identity.session().to_string()),
                PgType::Name,
            ),
            ("pg_backend_pid", 0) => konst(Datum::Int4(self.pid), PgType::Int4),
            ("pg_database_size", 1) => {
                let scan = self.size_scan(ScanSource::DatabaseSize);
                let (a, t) = self.bind_expr(args[0])?;
                let a = match t {
                    Some(t) if t.is_numeric() || t.is_reg() => {
                        self.coerce(a, &Some(t), &PgType::Oid, "pg_database_size")?
                    }
                    t => self.coerce(a, &t, &PgType::Text, "pg_database_size")?,
                };
                Ok((
                    BExpr::Func(Func::DatabaseSize(scan), vec![a]),
                    Some(PgType::Int8),
                ))
            }
            ("pg_relation_size" | "pg_table_size" | "pg_total_relation_size", 1)
            | ("pg_relation_size", 2) => {
                let scan = self.size_scan(ScanSource::RelationSizes);
                let a = self.bind_regclass_arg(args[0])?;
                Ok((
                    BExpr::Func(Func::RelationSize(scan), vec![a]),
                    Some(PgType::Int8),
                ))
            }
            ("pg_indexes_size", 1) => {
                // Rows are keyed in place: no index is stored apart from them.
                let a = self.bind_regclass_arg(args[0])?;
                Ok((
                    BExpr::Case {
                        operand: None,
                        whens: vec![(BExpr::IsNull(Box::new(a), false), BExpr::Const(Datum::Null))],
                        otherwise: Some(Box::new(BExpr::Const(Datum::Int8(0)))),
                    },
                    Some(PgType::Int8),
                ))
            }
            ("pg_size_pretty", 1) => {
                let a = self.bind_typed_arg(args[0], &PgType::Int8)?;
                Ok((BExpr::Func(Func::SizePretty, vec![a]), Some(PgType::Text)))
            }
            ("array_to_string", 2 | 3) => {
                let (array, _) = self.bind_array_arg(name, args[0])?;
                let mut bound = vec![array];
                for a in &args[1..] {
                    bound.push(self.bind_text_arg(a)?);
                }
                Ok((BExpr::Func(Func::ArrayToString, bound), Some(PgType::Text)))
            }
            ("current_setting", 1 | 2) => {
                let mut bound = vec![self.bind_text_arg(args[0])?];
                if let Some(missing_ok) = args.get(1) {
                    bound.push(self.bind_typed_arg(missing_ok, &PgType::Bool)?);
                }
                Ok((BExpr::Func(Func::CurrentSetting, bound), Some(PgType::Text)))
            }
            ("set_config", 3) => {
                let bound = vec![
                    self.bind_text_arg(args[0])?,
                    self.bind_text_arg(args[1])?,
                    self.bind_typed_arg(args[2], &PgType::Bool)?,
                ];
                Ok((BExpr::Func(Func::SetConfig, bound), Some(PgType::Text)))
            }
            ("pg_relation_is_publishable", 1) => {
                let a = self.bind_regclass_arg(args[0])?;
                Ok((
                    BExpr::Func(Func::RelationIsPublishable, vec![a]),
                    Some(PgType::Bool),
                ))
            }
            // Comments from pg_description; no function is catalogued; the
            // only role is a superuser with every privilege.
            ("obj_description", 2) => {
                let oid = self.bind_typed_arg(args[0], &PgType::Oid)?;
                let class = self.bind_text_arg(args[1])?;
                Ok((
                    BExpr::Func(Func::Description, vec![oid, class]),
                    Some(PgType::Text),
                ))
            }
            ("col_description", 2) => {
                let oid = self.bind_typed_arg(args[0], &PgType::Oid)?;
                let column = self.bind_typed_arg(args[1], &PgType::Int4)?;
                Ok((
                    BExpr::Func(Func::Description, vec![oid, column]),
                    Some(PgType::Text),
                ))
            }
            ("obj_description", 1)
            | ("shobj_description", 2)
            | ("pg_get_function_result", 1)
            | ("pg_get_function_arguments", 1)
            | ("pg_get_function_identity_arguments", 1) => {
                for a in args {
                    self.bind_expr(a)?;
                }
                konst(Datum::Null, PgType::Text)
            }
            // Tablespaces have no location of their own.
            ("pg_tablespace_location", 1) => {
                self.bind_typed_arg(args[0], &PgType::Oid)?;
                konst(Datum::text(""), PgType::Text)
            }
            // No extended statistics objects exist.
            ("pg_get_statisticsobjdef_columns", 1) => {
                self.bind_typed_arg(args[0], &PgType::Oid)?;
                konst(Datum::Null, PgType::Text)
            }
            // No column is backed by a sequence.
            ("pg_get_serial_sequence", 2) => {
                self.bind_text_arg(args[0])?;
                self.bind_text_arg(args[1])?;
                konst(Datum::Null, PgType::Text)
            }
            ("pg_encoding_to_char", 1) => {
                let a = self.bind_typed_arg(args[0], &PgType::Int4)?;
                Ok((
                    BExpr::Case {
                        operand: None,
                        whens: vec![(
                            BExpr::Cmp(
                                crate::plan::CmpOp::Eq,
                                Box::new(a),
                                Box::new(BExpr::Const(Datum::Int4(
                                    rocklake_types::settings::UTF8_ENCODING,
                                ))),
                            ),
                            BExpr::Const(Datum::text("UTF8")),
                        )],
                        otherwise: Some(Box::new(BExpr::Const(Datum::text("")))),
                    },
                    Some(PgType::Name),
                ))
            }
            // `pg_attrdef.adbin` (the only expressions kept) already holds
            // the text pg_get_expr gives: pretty or not, it is returned.
            ("pg_get_expr", 2 | 3) => {
                let expression = self.bind_text_arg(args[0])?;
                for extra in &args[1..] {
                    self.bind_expr(extra)?;
                }
                Ok((expression, Some(PgType::Text)))
            }
            ("pg_get_indexdef", 1 | 3) | ("pg_get_constraintdef", 1 | 2) => {
                let oid = self.bind_typed_arg(args[0], &PgType::Oid)?;
                for extra in &args[1..] {
                    self.bind_expr(extra)?;
                }
                if name == "pg_get_indexdef" {
                    let (column, pretty) = match args {
                        [_, column, pretty] => (
                            self.bind_typed_arg(column, &PgType::Int4)?,
                            self.bind_typed_arg(pretty, &PgType::Bool)?,
                        ),
                        _ => (
                            BExpr::Const(Datum::Int4(0)),
                            BExpr::Const(Datum::Bool(false)),
                        ),
                    };
                    return Ok((
                        BExpr::Func(Func::IndexDef, vec![oid, column, pretty]),
                        Some(PgType::Text),
                    ));
                }
                Ok((
                    BExpr::Func(Func::ConstraintDef, vec![oid]),
                    Some(PgType::Text),
                ))
            }
            ("coalesce" | "greatest" | "least", n) if n > 0 => {
                let func = match name {
                    "coalesce" => Func::Coalesce,
                    "greatest" => Func::Greatest,
                    _ => Func::Least,
                };
                self.bind_common_args(func, args, name)
            }
            ("nullif", 2) => self.bind_common_args(Func::Nullif, args, "NULLIF"),
            _ => Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "function {name}({}) does not exist",
                    vec!["unknown"; argc].join(", ")
                ),
            )),
        }
    }

    /// An argument that must be an array (or vector).
    fn bind_array_arg(&mut self, name: &str, e: &Expr) -> Result<(BExpr, PgType), SqlError> {
        let (b, t) = self.bind_expr(e)?;
        match t {
            Some(t) if t.is_array() => Ok((b, t)),
            other => Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!(
                    "function {name}({}) does not exist",
                    other.as_ref().map_or("unknown", PgType::display_name)
                ),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")),
        }
    }

    fn bind_common_args(
        &mut self,
        func: Func,
        args: &[&Expr],
        what: &str,
    ) -> Result<(BExpr, Ty), SqlError> {
        let mut bound = Vec::new();
        let mut ty: Ty = None;
        for a in args {
            let (b, t) = self.bind_expr(a)?;
            ty = common_type(&ty, &t, what)?;
            bound.push((b, t));
        }
        let target = ty.unwrap_or(PgType::Text);
        let mut out = Vec::new();
        for (b, t) in bound {
            out.push(self.coerce(b, &t, &target, what)?);
        }
        Ok((BExpr::Func(func, out), Some(target)))
    }

    fn bind_aggregate(
        &mut self,
        mut func: AggFunc,
        args: &[&Expr],
        modifiers: AggModifiers<'_>,
    ) -> Result<(BExpr, Ty), SqlError> {
        if self.agg.is_none() {
            return Err(SqlError::new(
                SqlState::GROUPING_ERROR,
                "aggregate functions are not allowed here",
            ));
        }
        // Arguments, ORDER BY and FILTER are over the FROM rows, and may not
        // hold aggregates of this level themselves.
        let saved = self.agg.take();
        let bound = self.bind_aggregate_inputs(&mut func, args, &modifiers);
        self.agg = saved;
        let (args, order, filter, ty) = bound?;
        let state = self.agg.as_mut().expect("agg state");
        let idx = state.group_asts.len() + state.calls.len();
        state.calls.push(AggCall {
            func,
            args,
            distinct: modifiers.distinct,
            order,
            filter,
        });
        state.call_types.push(Some(ty.clone()));
        Ok((BExpr::Col { up: 0, idx }, Some(ty)))
    }

    /// The bound arguments, ORDER BY keys and FILTER of an aggregate call,
    /// and its result type.
    #[allow(clippy::type_complexity)]
    fn bind_aggregate_inputs(
        &mut self,
        func: &mut AggFunc,
        args: &[&Expr],
        modifiers: &AggModifiers<'_>,
    ) -> Result<(Vec<BExpr>, Vec<(BExpr, bool, bool)>, Option<BExpr>, PgType), SqlError> {
        let arity = match func {
            AggFunc::CountStar => 0,
            AggFunc::JsonObjectAgg { .. }
            | AggFunc::StringAgg
            | AggFunc::Regression(_)
            | AggFunc::PercentileCont
            | AggFunc::PercentileDisc => 2,
            _ => 1,
        };
        if args.len() != arity {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                "aggregate called with wrong number of arguments",
            ));
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.bind_expr(a)?);
        }
        let at = bound.first().and_then(|(_, t)| t.clone());
        if let AggFunc::JsonAgg { binary, rows } = func {
            *rows = at
                .as_ref()
                .is_some_and(|t| t.is_array() || matches!(t, PgType::Record(_)));
            // The values become JSON as they are read.
            let convert = if *binary { "to_jsonb" } else { "to_json" };
            bound = vec![self.bind_library_call(convert, bound)?];
        }
        if let AggFunc::JsonObjectAgg { binary } = func {
            let value = bound.pop().expect("two arguments");
            let key = self.bind_library_call(crate::functions::json::KEY_TEXT, bound)?;
            let convert = if *binary { "to_jsonb" } else { "to_json" };
            bound = vec![key, self.bind_library_call(convert, vec![value])?];
        }
        // percentile_cont/disc of an array of fractions give an array.
        let fractions_array = matches!(func, AggFunc::PercentileCont | AggFunc::PercentileDisc)
            && bound
                .get(1)
                .and_then(|(_, t)| t.as_ref())
                .is_some_and(PgType::is_array);
        let continuous = match at {
            Some(PgType::Interval) => PgType::Interval,
            _ => PgType::Float8,
        };
        let ty =
            match *func {
                AggFunc::JsonAgg { binary: true, .. } | AggFunc::JsonObjectAgg { binary: true } => {
                    PgType::Jsonb
                }
                AggFunc::JsonAgg { .. } | AggFunc::JsonObjectAgg { .. } => PgType::Json,
                AggFunc::CountStar | AggFunc::Count => PgType::Int8,
                AggFunc::BoolAnd | AggFunc::BoolOr => PgType::Bool,
                AggFunc::Min | AggFunc::Max => at.clone().unwrap_or(PgType::Text),
                AggFunc::StringAgg => PgType::Text,
                AggFunc::ArrayAgg => match at.clone().unwrap_or(PgType::Text) {
                    t if t.is_array() => {
                        return Err(SqlError::unsupported(
                            "array_agg over arrays (multidimensional arrays) is not supported",
                        ))
                    }
                    t => PgType::array_of(t),
                },
                AggFunc::Sum => match at {
                    Some(PgType::Int2 | PgType::Int4) => PgType::Int8,
                    Some(PgType::Float4) => PgType::Float4,
                    Some(PgType::Float8) => PgType::Float8,
                    Some(PgType::Int8 | PgType::Numeric(_)) | None => PgType::Numeric(None),
                    Some(other) => return Err(agg_type_err("sum", &other)),
                },
                AggFunc::Avg => match at {
                    Some(PgType::Float4 | PgType::Float8) => PgType::Float8,
                    Some(PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Numeric(_))
                    | None => PgType::Numeric(None),
                    Some(other) => return Err(agg_type_err("avg", &other)),
                },
                AggFunc::Dispersion(_) => match at {
                    Some(PgType::Float4 | PgType::Float8) => PgType::Float8,
                    Some(PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Numeric(_))
                    | None => PgType::Numeric(None),
                    Some(other) => return Err(agg_type_err("variance", &other)),
                },
                AggFunc::Regression(crate::plan::Regression::Count) => PgType::Int8,
                AggFunc::Regression(_) => PgType::Float8,
                AggFunc::Bits(_) => match at {
                    Some(t @ (PgType::Int2 | PgType::Int4 | PgType::Int8)) => t,
                    None => PgType::Int4,
                    Some(other) => return Err(agg_type_err("bit_and", &other)),
                },
                AggFunc::PercentileCont if fractions_array => PgType::array_of(continuous.clone()),
                AggFunc::PercentileCont => continuous.clone(),
                AggFunc::PercentileDisc if fractions_array => {
                    PgType::array_of(at.clone().unwrap_or(PgType::Text))
                }
                AggFunc::PercentileDisc | AggFunc::Mode => at.clone().unwrap_or(PgType::Text),
            };
        let mut out = Vec::with_capacity(bound.len());
        for (i, (b, t)) in bound.into_iter().enumerate() {
            let target = match *func {
                AggFunc::BoolAnd | AggFunc::BoolOr => PgType::Bool,
                AggFunc::StringAgg if t.as_ref().is_some_and(|t| *t == PgType::Bytea) && i == 0 => {
                    return Err(SqlError::unsupported(
                        "string_agg over bytea is not supported",
                    ))
                }
                AggFunc::StringAgg => PgType::Text,
                AggFunc::Regression(_) => PgType::Float8,
                AggFunc::PercentileCont | AggFunc::PercentileDisc if i == 1 && fractions_array => {
                    PgType::array_of(PgType::Float8)
                }
                AggFunc::PercentileCont | AggFunc::PercentileDisc if i == 1 => PgType::Float8,
                AggFunc::PercentileCont => continuous.clone(),
                _ => t.clone().unwrap_or(PgType::Text),
            };
            out.push(self.coerce(b, &t, &target, "aggregate")?);
        }
        let mut order = Vec::with_capacity(modifiers.order_by.len());
        for o in modifiers.order_by {
            let desc = matches!(o.options.sort, Some(sqlparser::ast::OrderBySort::Desc));
            let nulls_first = o.options.nulls_first.unwrap_or(desc);
            order.push((self.bind_expr(&o.expr)?.0, desc, nulls_first));
        }
        let filter = match modifiers.filter {
            Some(f) => Some(self.bind_bool(f, "FILTER")?),
            None => None,
        };
        Ok((out, order, filter, ty))
    }
}

/// What may accompany an aggregate's arguments.
pub(super) struct AggModifiers<'a> {
    /// `DISTINCT` before the arguments.
    distinct: bool,
    /// `ORDER BY` after them.
    order_by: &'a [OrderByExpr],
    /// `FILTER (WHERE ...)`.
    filter: Option<&'a Expr>,
}

fn agg_type_err(name: &str, t: &PgType) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", t.display_name()),
    )
}

impl Binder<'_> {
    /// The statement's time on the clock of the session's zone.
    fn local_now(&self) -> i64 {
        with_session_zone(|zone| zone.local(self.now))
    }
}

/// A function's name, folded; `pg_catalog.` may qualify it.
fn function_name(f: &Function) -> Result<String, SqlError> {
    let parts: Vec<String> = f
        .name
        .0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => fold(id),
            other => other.to_string(),
        })
        .collect();
    match parts.as_slice() {
        [n] => Ok(n.clone()),
        [s, n] if s == "pg_catalog" => Ok(n.clone()),
        [s, n] if s == "information_schema" && n == "_pg_expandarray" => {
            Ok(super::arrays::EXPAND_ARRAY.to_string())
        }
        _ => Err(SqlError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!("function {} does not exist", parts.join(".")),
        )),
    }
}

/// The arguments of a call as written.
struct CallArguments<'a> {
    /// Positional argument expressions.
    args: Vec<&'a Expr>,
    /// Arguments in named notation (`days => 3`), by folded name.
    named: Vec<(String, &'a Expr)>,
    /// `DISTINCT` before the arguments.
    distinct: bool,
    /// A `*` argument (`count(*)`).
    star: bool,
    /// `ORDER BY` after the arguments (aggregates).
    order_by: Vec<OrderByExpr>,
}

fn call_arguments(f: &Function) -> Result<CallArguments<'_>, SqlError> {
    let list = match &f.args {
        FunctionArguments::None => {
            return Ok(CallArguments {
                args: Vec::new(),
                named: Vec::new(),
                distinct: false,
                star: false,
                order_by: Vec::new(),
            })
        }
        FunctionArguments::Subquery(_) => {
            return Err(SqlError::unsupported(format!("unsupported call {f}")))
        }
        FunctionArguments::List(l) => l,
    };
    let mut order_by = Vec::new();
    for clause in &list.clauses {
        match clause {
            FunctionArgumentClause::OrderBy(keys) => order_by.extend(keys.iter().cloned()),
            _ => return Err(SqlError::unsupported(format!("unsupported call {f}"))),
        }
    }
    let distinct = matches!(
        list.duplicate_treatment,
        Some(sqlparser::ast::DuplicateTreatment::Distinct)
    );
    let mut args = Vec::new();
    let mut named = Vec::new();
    let mut star = false;
    for a in &list.args {
        match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => args.push(x),
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
            FunctionArg::Named {
                name,
                arg: FunctionArgExpr::Expr(x),
                ..
            } => named.push((fold(name), x)),
            FunctionArg::ExprNamed {
                name: Expr::Identifier(name),
                arg: FunctionArgExpr::Expr(x),
                ..
            } => named.push((fold(name), x)),
            other => {
                return Err(SqlError::unsupported(format!(
                    "unsupported argument {other}"
                )))
            }
        }
    }
    Ok(CallArguments {
        args,
        named,
        distinct,
        star,
        order_by,
    })
}

impl Binder<'_> {
    /// A `regclass` argument: a relation name literal is resolved now, as a
    /// cast to `regclass` resolves it (42P01 if there is none).
    fn bind_regclass_arg(&mut self, e: &Expr) -> Result<BExpr, SqlError> {
        let (b, t) = self.bind_expr(e)?;
        if let (BExpr::Const(Datum::Text(name)), None) = (&b, &t) {
            let value = self
                .cat
                .reg_from_name(crate::catalog::RegKind::Class, name)?;
            return Ok(BExpr::Const(value));
        }
        self.coerce(b, &t, &PgType::RegClass, "regclass argument")
    }

    /// The index of the statement's scan of sizes `source`, added once.
    fn size_scan(&mut self, source: ScanSource) -> usize {
        let same =
            |s: &ScanReq| std::mem::discriminant(&s.source) == std::mem::discriminant(&source);
        if let Some(index) = self.scans.iter().position(same) {
            return index;
        }
        self.scans.push(ScanReq {
            source,
            filter: ScanFilter::default(),
            keyed_by: Vec::new(),
            reads_ctid: false,
            looked_up: false,
            columns: None,
        });
        self.scans.len() - 1
    }
}
