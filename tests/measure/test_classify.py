"""Tests for xshare.classify. Every command here is a string given to the classifier, never run."""

from __future__ import annotations

import pytest

from xshare.measure.classify import (
    EDIT,
    EXPLORATION,
    OTHER,
    SHELL,
    WEB,
    Verdict,
    classify_command,
    classify_tool,
    command_of,
    explain_command,
)

X, S = EXPLORATION, SHELL


def _params(table: list[tuple[str, str, str]]) -> list:
    return [pytest.param(cmd, want, id=name) for name, cmd, want in table]


# One case (or more) per classifier entry of the spec's change log.
CHANGE_LOG = [
    ("pass3a_quoted_pipe", "rg 'foo|bar' src", X),
    ("pass3a_quoted_semicolon", "git log --format='%h;%s' -n 20", X),
    ("pass3a_double_quoted_pipe", 'grep -rn "TODO|FIXME" src/', X),
    ("pass3a_newline_separates_stages", "cat setup.cfg\npip install -e .", S),
    ("pass3a_newline_both_read", "cat setup.cfg\nls -la src", X),
    ("pass4c_git_branch_create", "git branch feature/login", S),
    ("pass4c_git_tag_create", "git tag v1.2.0", S),
    ("pass4c_git_worktree_add", "git worktree add ../wt-fix fix-branch", S),
    ("pass4c_git_remote_add", "git remote add upstream https://example.com/r.git", S),
    ("pass4c_git_branch_list", "git branch -a", X),
    ("pass4c_git_tag_list", "git tag -l 'v1.*'", X),
    ("pass4c_git_remote_verbose", "git remote -v", X),
    ("pass4c_git_worktree_list", "git worktree list", X),
    ("review3a_git_C_diff", "git -C /home/dev/project diff --stat", X),
    ("review3a_git_c_log", "git -c core.pager=cat log --oneline -5", X),
    ("review3a_git_C_push_still_shell", "git -C /home/dev/project push origin main", S),
    ("review4a_env_runs_pytest", "env PYTHONPATH=. python -m pytest -q", S),
    ("review4a_env_alone_reads", "env", X),
    ("review4a_env_piped_reads", "env | grep -i proxy", X),
    ("review4a_env_runs_reader", "env LC_ALL=C sort names.txt", X),
    ("review4b_comment_keeps_newline", "cat app.py # look first\npytest -x", S),
    ("review4b_comment_hides_operator", "ls src # && rm -rf build", X),
    ("review4c_quoted_gt", "grep -F '>' templates/base.html", X),
    ("review4c_quoted_semicolon", 'rg ";" src', X),
    ("review4c_quoted_ampersand", "grep -n '&&' scripts/deploy.sh", X),
    ("review5a_branch_delete_verbose", "git branch -d -v feature", S),
    ("review5a_branch_cluster", "git branch -dv feature", S),
    ("review5a_tag_list_delete", "git tag -l -d v1", S),
    ("review5a_branch_move", "git branch -m old-name new-name", S),
    ("review5a_branch_set_upstream", "git branch --set-upstream-to=origin/main", S),
    ("review5b_reflog_expire", "git reflog expire --expire=now --all", S),
    ("review5b_reflog_delete", "git reflog delete HEAD@{2}", S),
    ("review5b_reflog_bare", "git reflog", X),
    ("review5b_reflog_options", "git reflog -n 20 --date=iso", X),
    ("review5b_reflog_show", "git reflog show main", X),
    ("review5b_reflog_exists", "git reflog exists refs/heads/main", X),
    ("review5c_escaped_gt", "rg \\> src", X),
    ("review5c_escaped_pipe", "grep -n a\\|b notes.txt", X),
    ("review5c_line_continuation", "grep -rn 'def main' \\\n  src/ tests/", X),
    ("review5c_continuation_then_shell", "ls \\\n  -la && make", S),
    ("review5c_find_delete", "find . -name '*.pyc' -delete", S),
    ("review5c_find_exec", "find . -name '*.py' -exec grep -l foo {} +", S),
    ("review5c_find_execdir", "find . -type f -execdir wc -l {} \\;", S),
    ("review5c_find_ok", "find /tmp -name core -ok rm {} \\;", S),
    ("review5c_find_fprint", "find . -type f -fprint files.txt", S),
    ("review5c_find_plain", "find . -name '*.py' -newer setup.py -print", X),
    ("review5c_sort_o", "sort -o sorted.txt names.txt", S),
    ("review5c_yq_i", "yq -i '.version = \"2\"' chart.yaml", S),
    ("spec_sed_without_i", "sed -n '1,40p' src/app.py", X),
    ("spec_sed_with_i", "sed -i 's/foo/bar/g' src/app.py", S),
    ("spec_dev_null_ok", "grep -r TODO src 2>/dev/null", X),
    ("spec_2to1_ok", "git status 2>&1", X),
    ("spec_redirect_to_file", "git diff > changes.patch", S),
]


@pytest.mark.parametrize(("command", "want"), _params(CHANGE_LOG))
def test_change_log_cases(command: str, want: str) -> None:
    assert classify_command(command) == want


LEXING = [
    ("single_quotes", "grep -n 'a; b' f.txt", X),
    ("ansi_c_quote_with_escaped_quote", "grep $'it\\'s|x' notes.txt", X),
    ("ansi_c_then_pipe_to_shell", "grep $'a\\tb' f | sh", S),
    ("locale_string", 'echo $"hello; world"', X),
    ("escaped_semicolon", "grep a\\;b f.txt", X),
    ("escaped_ampersand", "rg \\&\\& scripts", X),
    ("escaped_quote_in_double", 'grep "say \\"hi\\" | now" f.txt', X),
    ("hash_inside_word", "echo a#b && ls", X),
    ("escaped_hash_is_a_word", "echo \\# && make", S),
    ("comment_only", "# just a note", S),
    ("crlf_line_endings", "ls -la\r\ncat README.md\r\n", X),
    ("odd_whitespace", "ls\u00a0-la", S),
    ("semicolon_then_shell", "ls; make build", S),
    ("background_ampersand", "tail -f app.log & make run", S),
    ("pipe_stderr", "ls missing |& grep -i error", X),
    ("or_chain", "cat a.txt || cat b.txt", X),
    ("parameter_expansion", 'cat "${HOME}/notes/${FILE:-todo.md}"', X),
    ("arithmetic_expansion", "head -n $((10 + 5)) log.txt", X),
    ("arithmetic_command_alone", "(( count++ ))", S),
    ("array_assignment_then_read", "files=(a.py b.py); cat ${files[@]}", X),
    ("extglob", "ls !(*.pyc)", X),
    ("empty", "", S),
    ("blank", "   \n\t ", S),
]


@pytest.mark.parametrize(("command", "want"), _params(LEXING))
def test_lexing(command: str, want: str) -> None:
    assert classify_command(command) == want


HEREDOCS = [
    ("quoted_body_is_data", "cat <<'EOF'\nrm -rf / ; make | sh\nEOF", X),
    ("body_with_eof_lookalike", "cat <<'EOF'\nEOF is the end\n  EOF\nEOF\nls", X),
    ("after_body_shell", "cat <<'EOF'\nhello\nEOF\npytest -q", S),
    ("heredoc_to_file", "cat <<EOF > notes.txt\nhello\nEOF", S),
    ("heredoc_append_file", "cat >> notes.txt <<'EOF'\nmore\nEOF", S),
    ("dash_strips_tabs", "cat <<-END\n\tbody; rm x\n\tEND\nls", X),
    ("dash_then_shell", "cat <<-END\n\tbody\n\tEND\nmake", S),
    ("unquoted_body_substitution", "cat <<EOF\ntoday: $(date)\nEOF", X),
    ("unquoted_body_runs_shell", "cat <<EOF\n$(rm -rf build)\nEOF", S),
    ("quoted_body_does_not_expand", "cat <<'EOF'\n$(rm -rf build)\nEOF", X),
    ("python_heredoc", "python3 - <<'PY'\nprint(1)\nPY", S),
    ("commit_message_in_substitution",
     "git commit -m \"$(cat <<'EOF'\nFix parser (don't split on ')')\nEOF\n)\"", S),
    ("read_with_message_substitution", "echo \"$(cat <<'EOF'\nnote with ) and ' inside\nEOF\n)\" | wc -c", X),
    ("here_string", "grep -c x <<< 'a x b'", X),
    ("here_string_substitution", "wc -w <<< \"$(git log -1 --format=%B)\"", X),
    ("here_string_runs_shell", "cat <<< \"$(make clean)\"", S),
    ("unterminated_heredoc", "cat <<EOF\nno end here; make", X),
    ("two_heredocs_one_line", "cat <<A; cat <<'B'\nrm x\nA\nmake\nB\nls", X),
    ("two_heredocs_then_shell", "cat <<A; cat <<'B'\nrm x\nA\nmake\nB\nmake", S),
    ("heredoc_then_pipe", "cat <<EOF | grep -c x\nx\nEOF", X),
]


@pytest.mark.parametrize(("command", "want"), _params(HEREDOCS))
def test_heredocs(command: str, want: str) -> None:
    assert classify_command(command) == want


SUBSTITUTIONS = [
    ("dollar_paren_reads", "cat $(git ls-files '*.md')", X),
    ("dollar_paren_shell", "echo $(rm -rf build)", S),
    ("dollar_paren_in_double_quotes", 'echo "result: $(make test)"', S),
    ("nested", "wc -l $(find $(git rev-parse --show-toplevel) -name '*.py')", X),
    ("nested_shell", "ls $(dirname $(mktemp))", S),
    ("backticks_read", "cat `which pytest`", X),
    ("backticks_shell", "echo `touch marker`", S),
    ("backticks_in_double_quotes", 'echo "`npm -v`"', S),
    ("process_substitution", "diff <(sort a.txt) <(sort b.txt)", X),
    ("process_substitution_shell", "diff <(sort a.txt) <(pip freeze)", S),
    ("single_quoted_is_literal", "echo '$(rm -rf build)'", X),
    ("escaped_dollar_is_literal", 'echo "\\$(rm -rf build)"', X),
    ("assignment_substitution_read", "root=$(git rev-parse --show-toplevel) && ls $root", X),
    ("assignment_substitution_shell", "out=$(curl -s https://example.com) && echo $out", S),
    ("unterminated_substitution", "cat $(ls", X),
    ("subshell_reads", "(cd src && grep -rn foo .)", X),
    ("subshell_runs", "(cd src && make)", S),
    ("subshell_redirect", "(cat a; cat b) > both.txt", S),
    ("group_reads", "{ cat a.txt; cat b.txt; }", X),
    ("group_redirect", "{ cat a.txt; cat b.txt; } > both.txt", S),
]


@pytest.mark.parametrize(("command", "want"), _params(SUBSTITUTIONS))
def test_substitutions_and_groups(command: str, want: str) -> None:
    assert classify_command(command) == want


KEYWORDS = [
    ("for_loop", "for f in *.py; do cat $f; done", X),
    ("for_loop_shell_body", "for f in *.py; do black $f; done", S),
    ("for_loop_substitution_list", "for f in $(git ls-files); do wc -l $f; done", X),
    ("for_loop_redirect", "for f in *.py; do head -3 $f; done > heads.txt", S),
    ("if_then", "if grep -q x f; then cat f; fi", X),
    ("if_else_shell", "if [ -f Makefile ]; then cat Makefile; else make init; fi", S),
    ("while_read", "git ls-files | while read -r f; do wc -l \"$f\"; done", X),
    ("until", "until false; do cat status.txt; done", X),
    ("negation", "! grep -q TODO src/app.py", X),
    ("double_bracket_and", "[[ -f a.txt && -r a.txt ]] && cat a.txt", X),
    ("double_bracket_compare", 'if [[ "$a" > "$b" ]]; then echo later; fi', X),
    ("test_builtin", "test -d src && ls src", X),
    ("bracket_builtin", "[ -f setup.py ] && head setup.py", X),
    ("case_patterns", "case $OSTYPE in linux*) uname -a;; darwin*|bsd*) sw_vers;; esac", S),
    ("case_patterns_read", "case $1 in a|b) cat a;; *) ls;; esac", X),
    ("case_then_shell", "case $1 in a) ls;; esac; make", S),
    ("arithmetic_condition", "if (( n > 1 )); then cat a; fi", X),
    ("double_bracket_unterminated", "[[ -f a && cat a", X),
    ("double_bracket_as_argument", "echo [[ && make", S),
    ("double_bracket_after_keyword", "while [[ -f lock && -r lock ]]; do cat lock; done", X),
    ("select_break", "select f in *.txt; do cat $f; break; done", X),
    ("loop_control_alone", "break", S),
]


@pytest.mark.parametrize(("command", "want"), _params(KEYWORDS))
def test_keywords(command: str, want: str) -> None:
    assert classify_command(command) == want


REDIRECTS = [
    ("dev_null", "ls > /dev/null", X),
    ("dev_stderr", "echo oops > /dev/stderr", X),
    ("dev_stdout", "cat a >> /dev/stdout", X),
    ("file", "echo hi > out.txt", S),
    ("append", "echo hi >> out.txt", S),
    ("clobber", "ls >| listing.txt", S),
    ("both_to_file", "ls &> all.log", S),
    ("both_append", "ls &>> all.log", S),
    ("both_to_null", "ls &>/dev/null", X),
    ("fd_to_file", "grep -r x . 2> errors.log", S),
    ("fd3_to_file", "ls 3> fd3.txt", S),
    ("dup_stderr", "echo warn >&2", X),
    ("dup_fd", "cat a 1>&2 2>&1", X),
    ("close_fd", "ls 2>&-", X),
    ("gt_amp_file", "ls >& out.txt", S),
    ("input_redirect", "wc -l < data.csv", X),
    ("input_fd", "cat 0< data.csv", X),
    ("no_space", "cat a.txt>b.txt", S),
    ("read_write_open", "cat <> dev.txt", S),
    ("digits_not_fd_when_quoted", "echo '2'>/dev/null", X),
    ("tee_writes", "cat a | tee copy.txt", S),
    ("redirect_first", "> out.txt cat a", S),
    ("redirect_first_dev_null", "2>/dev/null cat a", X),
    ("quoted_dev_null", 'ls > "/dev/null"', X),
    ("missing_target", "ls >", S),
]


@pytest.mark.parametrize(("command", "want"), _params(REDIRECTS))
def test_redirects(command: str, want: str) -> None:
    assert classify_command(command) == want


WRAPPERS = [
    ("sudo", "sudo cat /var/log/syslog", X),
    ("sudo_options", "sudo -u postgres -E head /var/lib/pg/log", X),
    ("sudo_shell", "sudo -u root apt-get install jq", S),
    ("time", "time rg -c import", X),
    ("time_shell", "time make", S),
    ("time_o_writes", "/usr/bin/time -o timing.txt ls", S),
    ("time_path", "/usr/bin/time -v grep -c x f", X),
    ("export_substitution_shell", "export V=$(make -s version)", S),
    ("nohup", "nohup tail -f app.log &", X),
    ("env_options", "env -i PATH=/usr/bin -u HOME ls", X),
    ("env_split_string", "env -S 'python3 -m http.server'", S),
    ("assignments", "LC_ALL=C GREP_COLOR=1 grep -rn x .", X),
    ("assignments_only", "A=1 B=2", S),
    ("cd_only", "cd src", S),
    ("cd_then_read", "cd src && ls", X),
    ("pushd_read", "pushd src && ls && popd", X),
    ("export_then_read", "export PAGER=cat && git log -1", X),
    ("set_options_then_read", "set -euo pipefail; grep -c x f", X),
    ("set_prints_variables", "set | grep -i path", X),
    ("xargs_reader", "git ls-files -z | xargs -0 grep -l foo", X),
    ("xargs_I", "ls *.md | xargs -I {} head -1 {}", X),
    ("xargs_alone_echoes", "find . -name '*.py' | xargs", X),
    ("xargs_n_alone", "ls | xargs -n 1", X),
    ("xargs_shell", "find . -name '*.orig' | xargs rm", S),
    ("xargs_sed_i", "rg -l foo | xargs sed -i 's/foo/bar/'", S),
    ("timeout", "timeout 10 cat /dev/urandom", X),
    ("timeout_options", "timeout -s KILL -k 5 30s rg -n x", X),
    ("timeout_shell", "timeout 60 pytest", S),
    ("nice", "nice -n 10 grep -r x /", X),
    ("nice_shell", "nice make -j8", S),
    ("command_v", "command -v rg", X),
    ("command_runs", "command grep -n x f", X),
    ("command_runs_shell", "command rm -f x", S),
    ("stdbuf", "stdbuf -oL tail -f log.txt", X),
    ("absolute_path", "/usr/bin/grep -n x f", X),
    ("backslash_alias_bypass", "\\grep -n x f", X),
]


@pytest.mark.parametrize(("command", "want"), _params(WRAPPERS))
def test_prefixes_and_wrappers(command: str, want: str) -> None:
    assert classify_command(command) == want


OPTIONS = [
    ("sed_i_suffix", "sed -i.bak 's/a/b/' f", S),
    ("sed_in_place", "sed --in-place 's/a/b/' f", S),
    ("sed_in_place_suffix", "sed --in-place=.orig 's/a/b/' f", S),
    ("sed_ni", "sed -ni 's/a/b/p' f", S),
    ("sed_Ei", "sed -Ei 's/(a)/b/' f", S),
    ("sed_ie", "sed -ie 's/a/b/' f", S),
    ("sed_e_script_with_i", "sed -e 's/i/I/' f", X),
    ("sed_ei_is_script", "sed -ei f", X),
    ("sed_n_e", "sed -n -e '/x/p' f", X),
    ("sed_f", "sed -f edits.sed f", X),
    ("sed_macos_i", "sed -i '' 's/a/b/' f", S),
    ("sort_ro_cluster", "sort -ro out.txt in.txt", S),
    ("sort_output_long", "sort --output=out.txt in.txt", S),
    ("sort_rn", "sort -rn counts.txt", X),
    ("sort_t_o_separator", "sort -to -k2 in.txt", X),
    ("uniq_one_operand", "uniq -c words.txt", X),
    ("uniq_two_operands", "uniq words.txt unique.txt", S),
    ("uniq_skip_fields", "uniq -f 2 words.txt", X),
    ("yq_inplace", "yq --inplace '.a = 1' f.yaml", S),
    ("yq_read", "yq '.services | keys' compose.yaml", X),
    ("yq_output_format", "yq -o=json '.a' f.yaml", X),
    ("jq", "jq -r '.items[] | .name' data.json", X),
    ("awk_read", "awk -F: '$3 > 100 {print $1}' /etc/passwd", X),
    ("awk_inplace", "awk -i inplace '{print toupper($0)}' f", S),
    ("gawk_inplace_attached", "gawk -iinplace '{print}' f", S),
    ("awk_print_redirect", "awk '{print $1 > \"names.txt\"}' f", S),
    ("awk_printf_append", "awk '{printf \"%s\\n\", $2 >> \"out\"}' f", S),
    ("awk_print_stderr", "awk '{print \"bad\" > \"/dev/stderr\"}' f", X),
    ("awk_print_comparison_in_parens", "awk '{print ($1 > 5)}' f", X),
    ("awk_print_or", "awk '{print ($1 || $2)}' f", X),
    ("awk_pipe", "awk '{print | \"sort -u\"}' f", S),
    ("awk_system", "awk '{system(\"rm \" $1)}' f", S),
    ("awk_getline_command", "awk 'BEGIN{while ((\"ls\" | getline l) > 0) print l}'", S),
    ("awk_getline_file", "awk 'BEGIN{while ((getline l < \"f\") > 0) print l}'", X),
    ("awk_program_file", "awk -f report.awk data.txt", S),
    ("awk_string_with_system_word", "awk '/system\\(/ {print FILENAME}' a.c", X),
    ("xxd_one_operand", "xxd -l 64 image.png", X),
    ("xxd_two_operands", "xxd -r -p hex.txt out.bin", S),
    ("tree_o", "tree -o tree.txt src", S),
    ("tree", "tree -L 2 src", X),
    ("fd_exec", "fd -e py -x black", S),
    ("fd_plain", "fdfind -e py src", X),
]


@pytest.mark.parametrize(("command", "want"), _params(OPTIONS))
def test_command_options(command: str, want: str) -> None:
    assert classify_command(command) == want


GIT = [
    ("bare", "git", X),
    ("version_flag", "git --version", X),
    ("log", "git log --oneline -10", X),
    ("show_path", 'git show HEAD~1:"src/my file.py"', X),
    ("status_short", "git status --short", X),
    ("blame", "git blame -L 10,20 src/app.py", X),
    ("grep", "git grep -n 'def main'", X),
    ("ls_files", "git ls-files --others --exclude-standard", X),
    ("rev_parse", "git rev-parse --abbrev-ref HEAD", X),
    ("cat_file", "git cat-file -p HEAD", X),
    ("for_each_ref", "git for-each-ref --format='%(refname:short)' refs/heads", X),
    ("diff_output", "git diff --output=changes.diff", S),
    ("log_output_separate", "git log -p --output out.txt", S),
    ("git_dir_equals", "git --git-dir=/srv/repo.git log -3", X),
    ("git_dir_separate", "git --git-dir /srv/repo.git log -3", X),
    ("work_tree_separate", "git --work-tree /srv/site --git-dir /srv/site.git status", X),
    ("namespace", "git --namespace=team show-ref", X),
    ("no_pager", "git --no-pager diff HEAD~3", X),
    ("paginate_flags", "git -P log -1", X),
    ("bare_flag", "git --bare ls-tree HEAD", X),
    ("literal_pathspecs", "git --literal-pathspecs log -- 'a*b'", X),
    ("exec_path_equals", "git --exec-path=/opt/git status", X),
    ("config_env", "git --config-env=core.pager=PAGER log", X),
    ("commit", "git commit -am 'wip'", S),
    ("push", "git push origin main", S),
    ("checkout", "git checkout -b feature", S),
    ("add", "git add -A", S),
    ("unknown_alias", "git lg", S),
    ("branch_bare", "git branch", X),
    ("branch_verbose", "git branch -vv", X),
    ("branch_show_current", "git branch --show-current", X),
    ("branch_contains", "git branch --contains abc123", X),
    ("branch_merged", "git branch --merged main", X),
    ("branch_sort", "git branch --sort=-committerdate", X),
    ("branch_list_pattern", "git branch --list 'feat/*'", X),
    ("branch_copy", "git branch -c main backup", S),
    ("branch_force", "git branch -f main HEAD~1", S),
    ("branch_D", "git branch -D old", S),
    ("branch_track", "git branch --track dev origin/dev", S),
    ("branch_unset_upstream", "git branch --unset-upstream", S),
    ("branch_edit_description", "git branch --edit-description", S),
    ("tag_bare", "git tag", X),
    ("tag_n_lines", "git tag -n5", X),
    ("tag_sort_separate", "git tag --sort -creatordate", X),
    ("tag_points_at", "git tag --points-at HEAD", X),
    ("tag_verify", "git tag -v v1.0", X),
    ("branch_verbose_name_creates", "git branch -v topic", S),
    ("tag_annotate", "git tag -a v2 -m 'release'", S),
    ("tag_sign", "git tag -s v2", S),
    ("tag_force", "git tag -f v1 HEAD", S),
    ("tag_message_long", "git tag --message=x v3", S),
    ("remote_bare", "git remote", X),
    ("remote_show", "git remote show origin", X),
    ("remote_get_url", "git remote get-url origin", X),
    ("remote_set_url", "git remote set-url origin git@example.com:r.git", S),
    ("worktree_remove", "git worktree remove ../wt", S),
    ("stash_list", "git stash list", X),
    ("stash_show", "git stash show -p stash@{0}", X),
    ("stash_bare", "git stash", S),
    ("stash_pop", "git stash pop", S),
    ("config_get", "git config --get user.email", X),
    ("config_list", "git config --global --list", X),
    ("config_l", "git config -l", X),
    ("config_get_regexp", "git config --get-regexp '^remote'", X),
    ("config_new_get", "git config get user.name", X),
    ("config_new_list", "git config list --show-origin", X),
    ("config_one_name_reads", "git config core.autocrlf", X),
    ("config_one_name_global", "git config --global core.editor", X),
    ("config_set", "git config user.name 'Dev Person'", S),
    ("config_new_set", "git config set user.name Dev", S),
    ("config_unset", "git config --unset user.name", S),
]


@pytest.mark.parametrize(("command", "want"), _params(GIT))
def test_git(command: str, want: str) -> None:
    assert classify_command(command) == want


# Property checks over single-line commands that read.
READS = [
    "cat README.md", "head -n 50 src/app.py", "tail -20 log.txt", "less setup.cfg", "bat src/main.rs",
    "grep -rn 'import os' src", "egrep 'a|b' f", "fgrep -x word f", "rg -n --type py 'class \\w+'",
    "ag TODO", "ack needle", "ugrep -r x .", "ug -n x src", "find . -name '*.md'", "bfs . -type f",
    "fd -e toml", "ls -la", "tree -L 2", "wc -l src/*.py", "diff a.txt b.txt", "cmp a.bin b.bin",
    "comm -12 a b", "file image.png", "stat setup.py", "du -sh .", "df -h", "pwd", "echo hello",
    "printf '%s\\n' a b", "sort -u names", "uniq -c counts", "cut -d, -f2 data.csv", "tr a-z A-Z < f",
    "nl -ba f", "column -t f", "jq . package.json", "yq . f.yaml", "awk '{print $2}' f", "sed -n 5p f",
    "realpath .", "readlink -f bin/tool", "dirname /a/b", "basename /a/b.py .py", "which python3",
    "whereis git", "type ls", "command -v node", "tac log", "rev f", "od -c f", "hexdump -C f",
    "xxd f", "strings bin", "md5sum f", "sha1sum f", "sha256sum f", "shasum -a 256 f", "cksum f",
    "true", "false", "date -u", "whoami", "id -u", "uname -a", "hostname", "printenv PATH", "test -f x",
    "[ -d src ]", "[[ -n $HOME ]]", "git log -3", "git diff --stat", "ls | wc -l", "cat a && cat b",
    "git status; git diff", "grep -c x f || true",
]
SHELLS = ["make", "pytest -q", "npm install", "rm -rf build", "python3 setup.py build", "touch x",
          "git push", "cp a b", "mkdir -p out", "sed -i s/a/b/ f", "sort -o f f", "tee log"]


@pytest.mark.parametrize("command", READS)
def test_reads(command: str) -> None:
    assert classify_command(command) == EXPLORATION


@pytest.mark.parametrize("command", READS)
def test_property_redirect_to_file_makes_shell(command: str) -> None:
    assert classify_command(command + " > out.txt") == SHELL
    assert classify_command(command + " >> out.txt") == SHELL


@pytest.mark.parametrize("command", READS)
def test_property_appending_pytest_makes_shell(command: str) -> None:
    assert classify_command(command + " && pytest") == SHELL
    assert classify_command(command + "\npytest") == SHELL


def test_property_cd_prefix_keeps_category_everywhere() -> None:
    for command in ALL_COMMANDS:
        assert classify_command("cd src && " + command) == classify_command(command), command


@pytest.mark.parametrize("command", READS + SHELLS)
def test_property_prefixes_keep_category(command: str) -> None:
    want = classify_command(command)
    assert classify_command("cd src && " + command) == want
    assert classify_command("A=1 " + command) == want
    assert classify_command("sudo " + command) == want
    assert classify_command(command + " 2>&1 | head -20") == want


@pytest.mark.parametrize("command", SHELLS)
def test_shells(command: str) -> None:
    assert classify_command(command) == SHELL


TABLES = (CHANGE_LOG, LEXING, HEREDOCS, SUBSTITUTIONS, KEYWORDS, REDIRECTS, WRAPPERS, OPTIONS, GIT)
ALL_COMMANDS = [row[1] for table in TABLES for row in table]


def test_every_prefix_lexes_without_raising() -> None:
    # Truncated commands (unterminated quotes, substitutions, heredocs) never crash the lexer.
    for command in ALL_COMMANDS:
        for i in range(len(command) + 1):
            assert classify_command(command[:i]) in (EXPLORATION, SHELL)


def test_hostile_nesting_does_not_recurse_forever() -> None:
    assert classify_command("echo " + "$(" * 5000) in (EXPLORATION, SHELL)
    assert classify_command("echo " + "`echo \\" * 200) in (EXPLORATION, SHELL)
    assert classify_command("cat " + "$(cat " * 3000 + "x" + ")" * 3000) == EXPLORATION
    assert explain_command("echo " + "$(echo " * 5 + "$(make)" + ")" * 5).reason.count("substitution") == 1


IN_SUB = " (in a substitution)"
EXPLAIN = [  # id, command, (category, stage, word, reason)
    ("pipe_stage", "cat a.txt | sort -o out.txt", (S, "sort -o out.txt", "sort", "sort -o writes a file")),
    ("sed_i", "cd src && sed -i 's/a/b/' f", (S, "sed -i 's/a/b/' f", "sed", "sed with -i writes files")),
    ("redirect", "grep -c x f > n.txt", (S, "grep -c x f > n.txt", ">", "redirect to n.txt writes a file")),
    ("fd_redirect", "ls 2> err.log", (S, "ls 2> err.log", "2>", "redirect to err.log writes a file")),
    ("not_listed", "ls && make all", (S, "make all", "make", "make is not on the read-only list")),
    ("reads", "cd src && rg -n x | head", (X, "rg -n x", "rg", "every stage reads")),
    ("substitution", "echo $(npm -v)", (S, "npm -v", "npm", "npm is not on the read-only list" + IN_SUB)),
    ("git_sub", "git -C r stash", (S, "git -C r stash", "git", "git stash changes the stash")),
    ("heredoc_stage", "cat <<'EOF'\nx\nEOF\nmake", (S, "make", "make", "make is not on the read-only list")),
    ("cd_only", "cd src", (S, "cd src", "cd", "nothing reads (cd only changes shell state)")),
    ("empty", "", (S, "", "", "empty command")),
]


@pytest.mark.parametrize(("command", "want"), [pytest.param(*row[1:], id=row[0]) for row in EXPLAIN])
def test_explain_names_stage_and_word(command: str, want: tuple[str, str, str, str]) -> None:
    assert explain_command(command) == Verdict(*want)


def test_explain_is_cached_and_frozen() -> None:
    v = explain_command("git log -1")
    assert explain_command("git log -1") is v
    with pytest.raises(AttributeError):
        v.category = SHELL  # type: ignore[misc]


def test_explain_non_string() -> None:
    assert explain_command(None).category == SHELL  # type: ignore[arg-type]
    assert classify_command(["ls"]) == SHELL  # type: ignore[arg-type]


CLAUDE_TOOLS = [
    ("read", "Read", {"file_path": "/r/a.py"}, X),
    ("grep", "Grep", {"pattern": "foo", "path": "src"}, X),
    ("glob", "Glob", {"pattern": "**/*.py"}, X),
    ("ls", "LS", {"path": "/r"}, X),
    ("notebook_read", "NotebookRead", {"notebook_path": "a.ipynb"}, X),
    ("bash_read", "Bash", {"command": "rg -n foo src", "description": "search"}, X),
    ("bash_shell", "Bash", {"command": "npm test"}, S),
    ("bash_no_command", "Bash", {}, S),
    ("bash_command_not_str", "Bash", {"command": ["ls"]}, S),
    ("bash_none_input", "Bash", None, S),
    ("edit", "Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, EDIT),
    ("write", "Write", {"file_path": "a.py", "content": ""}, EDIT),
    ("multi_edit", "MultiEdit", {"file_path": "a.py", "edits": []}, EDIT),
    ("notebook_edit", "NotebookEdit", {}, EDIT),
    ("web_fetch", "WebFetch", {"url": "https://example.com"}, WEB),
    ("web_search", "WebSearch", {"query": "x"}, WEB),
    ("task", "Task", {"prompt": "explore"}, OTHER),
    ("agent", "Agent", {}, OTHER),
    ("todo", "TodoWrite", {"todos": []}, OTHER),
    ("mcp", "mcp__github__get_file", {"path": "a"}, OTHER),
    ("tool_search", "ToolSearch", {}, OTHER),
    ("skill", "Skill", {}, OTHER),
    ("bash_output", "BashOutput", {"bash_id": "1"}, OTHER),
    ("lowercase_read_is_not_claude", "read", {}, OTHER),
]
HERMES_TOOLS = [
    ("read_file", "read_file", {"path": "a.py", "offset": 1}, X),
    ("search_files", "search_files", {"pattern": "foo", "target": "content"}, X),
    ("terminal_read", "terminal", {"command": "git log -5", "timeout": 30}, X),
    ("terminal_shell", "terminal", {"command": "pip install -e ."}, S),
    ("terminal_json_string", "terminal", '{"command": "cat README.md"}', X),
    ("terminal_json_string_shell", "terminal", '{"command": "make"}', S),
    ("terminal_bad_json", "terminal", '{"command": "ls', S),
    ("terminal_json_list", "terminal", '["ls"]', S),
    ("terminal_bytes", "terminal", b'{"command": "ls"}', X),
    ("terminal_invalid_utf8", "terminal", b'\xff\xfe', S),
    ("patch", "patch", {"mode": "replace", "path": "a.py"}, EDIT),
    ("write_file", "write_file", {"path": "a.py", "content": "x"}, EDIT),
    ("web_search", "web_search", {"query": "x"}, WEB),
    ("web_extract", "web_extract", {"urls": ["https://example.com"]}, WEB),
    ("execute_code", "execute_code", {"code": "print(1)"}, OTHER),
    ("delegate", "delegate_task", {}, OTHER),
    ("mcp", "mcp_github_search", {}, OTHER),
]


@pytest.mark.parametrize(("name", "tool_input", "want"),
                         [pytest.param(*row[1:], id=f"claude_{row[0]}") for row in CLAUDE_TOOLS]
                         + [pytest.param(*row[1:], id=f"hermes_{row[0]}") for row in HERMES_TOOLS])
def test_classify_tool(name: str, tool_input: object, want: str) -> None:
    assert classify_tool(name, tool_input) == want


GARBAGE = [None, 42, 3.5, "", "not json", "null", "[]", '{"command": 5}', [], ["command"], {"command": None},
           {"command": {"nested": 1}}, {1: 2}, object(), b"\x00", float("nan"), {"command": "\x00\x01"}]


@pytest.mark.parametrize("tool_input", GARBAGE)
@pytest.mark.parametrize("name", ["Bash", "terminal", "Read", "read_file", "Grep", "Glob", "Edit", "Task"])
def test_classify_tool_never_raises(name: str, tool_input: object) -> None:
    assert classify_tool(name, tool_input) in (EXPLORATION, EDIT, SHELL, WEB, OTHER)
    result = command_of(name, tool_input)
    assert result is None or isinstance(result, str)


@pytest.mark.parametrize("name", [None, 5, ("Bash",), b"Bash"])
def test_classify_tool_odd_names(name: object) -> None:
    assert classify_tool(name, {"command": "ls"}) == OTHER  # type: ignore[arg-type]
    assert command_of(name, {"command": "ls"}) is None  # type: ignore[arg-type]


COMMAND_OF = [
    ("bash", "Bash", {"command": "ls -la"}, "ls -la"),
    ("terminal", "terminal", {"command": "git status"}, "git status"),
    ("terminal_json", "terminal", '{"command": "pwd"}', "pwd"),
    ("read", "Read", {"file_path": "/r/a.py", "limit": 10}, "/r/a.py"),
    ("read_file", "read_file", {"path": "src/a.py"}, "src/a.py"),
    ("grep", "Grep", {"pattern": "def \\w+", "path": "src"}, "def \\w+"),
    ("search_files", "search_files", {"pattern": "TODO", "target": "content"}, "TODO"),
    ("glob", "Glob", {"pattern": "**/*.ts"}, "**/*.ts"),
    ("edit", "Edit", {"file_path": "a.py"}, None),
    ("web", "WebFetch", {"url": "https://example.com"}, None),
    ("missing", "Read", {"path": "a.py"}, None),
    ("not_str", "Bash", {"command": 3}, None),
]


@pytest.mark.parametrize(("name", "tool_input", "want"),
                         [pytest.param(*row[1:], id=row[0]) for row in COMMAND_OF])
def test_command_of(name: str, tool_input: object, want: str | None) -> None:
    assert command_of(name, tool_input) == want
