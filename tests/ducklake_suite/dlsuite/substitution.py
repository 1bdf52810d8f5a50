"""Substitution in record text, as DuckDB's runner: keywords (`${VAR}`/`{VAR}` of
test-env, require-env and the built-in variables, `__TEST_DIR__`, `{UUID}`, ...),
loop variables (`loop`, `foreach` and its `<integral>`-style groups) and the
skipif/onlyif conditions on loop variables."""

from __future__ import annotations

import dataclasses
import os
import uuid

from .errors import TestFailure, TestSkip, TestUnsupported


class Keywords:
    """The variables of one test file and their substitution."""

    def __init__(self, root: str, file_name: str, test_dir: str, config_env: dict):
        self.root = root
        self.file_name = file_name                      # e.g. test/sql/general/x.test
        self.test_dir = test_dir
        self.config_env = dict(config_env)              # test_env of the config (overrides test-env)
        self.test_uuid = str(uuid.uuid4())
        base_env = {
            "TEST_UUID": self.test_uuid,
            "BUILD_DIR": "",
            "WORKING_DIR": root,
            "DATA_DIR": os.path.join(root, "data"),
            "TEMP_DIR": test_dir,
            "CATALOG_DIR": os.path.join(test_dir, self.test_uuid),
        }
        self.test_env = dict(base_env)
        self.test_env.update(self.config_env)
        self.env_vars = dict(self.test_env)             # the runner's environment_variables
        self.env_vars["WORKING_DIR"] = root
        self.env_vars["TEST_NAME"] = file_name
        self.env_vars["TEST_NAME__NO_SLASH"] = file_name.replace("/", "_")

    def replace(self, text: str) -> str:
        """Substitute variables and keywords (ReplaceKeywords); a new UUID per call."""
        for name, value in list(self.env_vars.items()):
            text = text.replace("${%s}" % name, value)
            text = text.replace("{%s}" % name, value)
        text = text.replace("{TEST_DIR}", self.test_dir)
        text = text.replace("{UUID}", str(uuid.uuid4()))
        text = text.replace("{TEST_NAME}", self.file_name)
        text = text.replace("{BASE_TEST_NAME}", self.file_name.replace("/", "_"))
        text = text.replace("__TEST_DIR__", self.test_dir)
        text = text.replace("__WORKING_DIRECTORY__", self.root)
        if "__BUILD_DIRECTORY__" in text:
            raise TestUnsupported(None, "__BUILD_DIRECTORY__ (no DuckDB build directory)")
        return text

    def replace_loop_iterator(self, text: str, name: str, replacement: str) -> str:
        """Substitute one loop variable (or a `a,b` pair of them) in `text`."""
        replacement = self.replace(replacement)
        if "," in name:
            names = name.split(",")
            reps = replacement.split(",")
            if len(names) != len(reps):
                raise TestFailure(None, f"foreach loop: number of commas in {name} does not match {replacement}")
            pairs = zip(names, reps)
        else:
            pairs = [(name, replacement)]
        for n, rep in pairs:
            text = text.replace("${%s}" % n, rep).replace("{%s}" % n, rep)
        return text

    def loop_replacement(self, text: str, loops: list[LoopState]) -> str:
        """Substitute the variables of all running loops in `text`."""
        for lp in loops:
            text = self.replace_loop_iterator(text, lp.name, lp.value())
        return text

    def define_test_env(self, name: str, default: str):
        """`test-env NAME DEFAULT`: the config's test_env wins over the default."""
        self.env_vars[name] = self.test_env.get(name, default)

    def require_env(self, params: list[str], fail):
        """`require-env NAME [VALUE]`: skip the file unless NAME is set (to VALUE)."""
        name = params[0]
        defined = name in self.config_env
        actual = self.config_env[name] if defined else os.environ.get(name)
        if actual is None:
            raise TestSkip("require-env " + name)
        if len(params) == 2 and actual != params[1]:
            raise TestSkip(f"require-env {name} {params[1]}")
        if not defined and name in self.env_vars:
            fail(f"Environment variable '{name}' has already been defined")
        self.env_vars[name] = actual


@dataclasses.dataclass
class LoopState:
    """A loop variable: `loop name start end` (tokens empty) or `foreach name tokens...`."""
    name: str
    idx: int
    start: int
    end: int
    parallel: bool
    tokens: list
    skipped: bool = False

    def copy(self) -> LoopState:
        """An independent copy (its own token list)."""
        return dataclasses.replace(self, tokens=list(self.tokens))

    def value(self) -> str:
        """The current value of the variable."""
        return str(self.idx) if not self.tokens else self.tokens[self.idx]


def expand_foreach_token(param: str, result: list) -> bool:
    """ForEachTokenReplace: add the members of a group (`<integral>`, `<numeric>`, ...)
    to `result`, or remove `!x`; False if `param` is a plain value."""
    name = param.lower().strip()
    collection = False
    is_all = name == "<alltypes>"
    is_numeric = is_all or name == "<numeric>"
    is_integral = is_numeric or name == "<integral>"
    is_signed = is_integral or name == "<signed>"
    is_unsigned = is_integral or name == "<unsigned>"
    if name.startswith("!"):
        if param[1:] not in result:
            return False
        result.remove(param[1:])
        collection = True
    if is_signed:
        result += ["tinyint", "smallint", "integer", "bigint", "hugeint"]
        collection = True
    if is_unsigned:
        result += ["utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"]
        collection = True
    if is_numeric:
        result += ["float", "double"]
        collection = True
    if is_all:
        result += ["bool", "interval", "varchar"]
        collection = True
    if name == "<compression>":
        result += ["none", "uncompressed", "rle", "bitpacking", "dictionary", "fsst", "dict_fsst", "alp", "alprd"]
        collection = True
    if name == "<all_types_columns>":
        raise TestUnsupported(None, "foreach <all_types_columns>")
    return collection


def loop_conditions_hold(running_loops: list[LoopState], conditions) -> bool:
    """Whether a record with skipif/onlyif conditions on loop variables runs now."""
    if not conditions:
        return True
    if not running_loops:
        raise RuntimeError("Conditions (onlyif/skipif) on loop parameters can only occur within a loop")
    for cond in conditions:
        holds = False
        found = False
        for lp in running_loops:
            if lp.name != cond.keyword:
                continue
            found = True
            holds = _condition_holds(lp.value(), cond)
        if not found:
            raise RuntimeError(f"Condition in onlyif/skipif not found: {cond.keyword} must be a loop iterator name")
        if holds and cond.skip_if:
            return False
        if not holds and not cond.skip_if:
            return False
    return True


def _condition_holds(value: str, cond) -> bool:
    if cond.op == "=":
        return value == cond.value
    if cond.op == "<>":
        return value != cond.value
    lv, cv = int(value), int(cond.value)
    return {">": lv > cv, "<": lv < cv, ">=": lv >= cv, "<=": lv <= cv}[cond.op]
