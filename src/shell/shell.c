/*
 * shell.c — `omnigraph shell`: the read-eval-print loop (docs/shell.md).
 *
 * Lines come from libedit (a terminal: prompts, line editing, history, completion, Ctrl-C)
 * or from plain stdin (a script: no prompt, the exit status says whether anything failed).
 * Either way each line goes through og_shell_feed: a dot command, or part of a statement
 * that runs once its braces close (input.h).  The graph is reached only through the
 * backend (backend.h).
 */
#include <ctype.h>
#include <editline/readline.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell/input.h"
#include "shell/session.h"
#include "shell/shell.h"
#include "util/error.h"

/* Set by SIGINT (Ctrl-C).  The backend's running call watches it (og_db_set_cancel); at the
 * prompt it abandons the line being typed. */
static volatile int interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

og_shell_target og_shell_target_now(const og_shell *s)
{
    og_shell_target t = {s->branch, s->commit[0] ? s->commit : NULL};
    return t;
}

void og_shell_refresh_names(og_shell *s)
{
    og_shell_target t = og_shell_target_now(s);
    char *text = NULL;
    if (s->be.ops->catalog(s->be.self, &t, &text) == OG_OK) og_shell_names_set_catalog(&s->names, text);
    s->be.ops->free(text);
    text = NULL;
    if (s->be.ops->branches(s->be.self, &text) == OG_OK) og_shell_names_set_branches(&s->names, text);
    s->be.ops->free(text);
}

/* A script's failures say where: "<stdin>:12: " (or with the column the compiler named). */
static void where(const og_shell *s, unsigned line, unsigned col)
{
    if (s->interactive && !s->read_depth) return;
    if (!line) line = s->stmt_line ? s->stmt_line : s->line_no;
    if (col) fprintf(stderr, "%s:%u:%u: ", s->source, line, col);
    else fprintf(stderr, "%s:%u: ", s->source, line);
}

void og_shell_print_failure(og_shell *s, og_status st)
{
    where(s, 0, 0);
    fprintf(stderr, "error: %s: %s\n", og_status_name(st), og_error_message());
    s->errors++;
}

void og_shell_error(og_shell *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    where(s, 0, 0);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    s->errors++;
}

/* The error of a statement, with its line and a caret under the column the compiler named.
 * The message's "<query>:L:C: " becomes the script's own position (or "at L:C" typed). */
static void print_stmt_error(og_shell *s, og_status st, const char *src, size_t len)
{
    const char *msg = og_error_message();
    unsigned line, col;
    size_t ts, te;
    int pos = og_shell_error_pos(msg, &line, &col, &ts, &te);
    int typed = s->interactive && !s->read_depth;
    unsigned offset = typed ? 0 : s->stmt_line - 1;
    if (!pos) {
        where(s, 0, 0);
        fprintf(stderr, "error: %s: %s", og_status_name(st), msg);
    } else {
        where(s, line + offset, col);
        fprintf(stderr, "error: %s", og_status_name(st));
        if (typed) fprintf(stderr, " at %u:%u", line, col);
        fprintf(stderr, ": %.*s%s", (int)ts, msg, msg + te);
    }
    if (!*msg || msg[strlen(msg) - 1] != '\n') fputc('\n', stderr);
    if (pos) {
        og_buf b = OG_BUF_INIT;
        og_shell_caret(&b, src, len, line, col, offset);
        if (b.len) fwrite(b.data, 1, b.len, stderr);
        og_buf_free(&b);
    }
    s->errors++;
}

/* Prints rendered rows, cut after s->maxrows with a note.  `json` arrives as JSON lines (a
 * metadata line, then a row per line) and prints as an array with one row per line. */
static void print_rows(og_shell *s, const char *text, size_t rows)
{
    size_t keep = s->maxrows > 0 && rows > (size_t)s->maxrows ? (size_t)s->maxrows : rows;
    const char *p = text;
    if (s->fmt == OG_FORMAT_JSON) {
        p = strchr(p, '\n'); /* the metadata line */
        p = p ? p + 1 : text + strlen(text);
        fputs("[", stdout);
        for (size_t i = 0; i < keep && *p; i++) {
            const char *nl = strchr(p, '\n');
            size_t l = nl ? (size_t)(nl - p) : strlen(p);
            printf("%s%.*s", i ? ",\n " : "", (int)l, p);
            p = nl ? nl + 1 : p + l;
        }
        fputs("]\n", stdout);
    } else if (s->fmt == OG_FORMAT_CSV) {
        /* records end at a line break outside quotes: a header, then one per row */
        size_t recs = 0;
        int quoted = 0;
        const char *e = p;
        for (; *e && recs < keep + 1; e++) {
            if (*e == '"') quoted = !quoted;
            else if (*e == '\n' && !quoted) recs++;
        }
        fwrite(p, 1, (size_t)(e - p), stdout);
    } else { /* table: a header line, a rule, a line per row, then "(N rows)" */
        const char *e = p;
        for (size_t l = 0; *e && l < keep + 2; e++)
            if (*e == '\n') l++;
        fwrite(p, 1, (size_t)(e - p), stdout);
        if (keep == rows) fputs(e, stdout);
    }
    if (keep < rows)
        fprintf(s->fmt == OG_FORMAT_TABLE ? stdout : stderr,
                "(%zu rows, the first %zu shown: `.maxrows 0` prints them all)\n", rows, keep);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* The .params a statement declares (`query q($a: T, $b: U)`): .params holds values for many
 * queries, and the API refuses a parameter its query does not declare.  NULL = none; a
 * statement whose header cannot be found gets them all.  Free with free(). */
static char *params_for(const og_shell *s, const char *src, size_t len)
{
    if (!s->params) return NULL;
    const char *open = memchr(src, '(', len), *brace = memchr(src, '{', len);
    if (!open || (brace && brace < open)) return strdup(s->params);
    const char *close = memchr(open, ')', len - (size_t)(open - src));
    if (!close) return strdup(s->params);
    json_t *all = json_loads(s->params, 0, NULL), *some = json_object();
    for (const char *p = open; p < close; p++) {
        if (*p != '$') continue;
        size_t l = 0;
        while (p + 1 + l < close && (isalnum((unsigned char)p[1 + l]) || p[1 + l] == '_')) l++;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(l < 255 ? l : 255), p + 1);
        json_t *v = json_object_get(all, name);
        if (v) json_object_set(some, name, v);
    }
    char *out = json_object_size(some) ? json_dumps(some, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(all);
    json_decref(some);
    return out;
}

/* Runs one complete statement src[0..len). */
static void run_stmt(og_shell *s, const char *src, size_t len)
{
    og_shell_target t = og_shell_target_now(s);
    char *params = params_for(s, src, len);
    interrupted = 0;
    double t0 = now_ms();
    og_status st;
    if (s->explain_next) {
        s->explain_next = 0;
        char *plan = NULL;
        st = s->be.ops->explain(s->be.self, src, len, params, &t, &plan);
        if (st == OG_OK) fputs(plan, stdout);
        s->be.ops->free(plan);
    } else {
        og_shell_result r;
        og_format fmt = s->fmt == OG_FORMAT_JSON ? OG_FORMAT_JSONL : s->fmt;
        st = s->be.ops->run(s->be.self, src, len, params, &t, fmt, &r);
        if (st == OG_OK && !r.write) {
            print_rows(s, r.text, r.rows);
        } else if (st == OG_OK && !r.receipt.published) {
            printf("no changes (nothing published)\n");
        } else if (st == OG_OK) {
            printf("affected %llu nodes, %llu edges in commit %s on %s\n", (unsigned long long)r.receipt.affected_nodes,
                   (unsigned long long)r.receipt.affected_edges, r.receipt.commit, r.receipt.branch);
        }
        s->be.ops->free(r.text);
    }
    double took = now_ms() - t0;
    if (st == OG_ERR_LIMIT && interrupted) {
        where(s, 0, 0);
        fprintf(stderr, "%scancelled (Ctrl-C): %s\n", s->interactive ? "\n" : "", og_error_message());
        s->errors++;
    } else if (st) {
        print_stmt_error(s, st, src, len);
    }
    interrupted = 0;
    free(params);
    if (s->timer) printf("time: %.1f ms\n", took);
    fflush(stdout);
}

/* Lines consumed by text[0..n). */
static unsigned count_lines(const char *text, size_t n)
{
    unsigned l = 0;
    for (size_t i = 0; i < n; i++) l += text[i] == '\n';
    return l;
}

void og_shell_feed(og_shell *s, const char *line)
{
    s->line_no++;
    int open = s->stmt.len && !og_shell_stmt_blank((const char *)s->stmt.data, s->stmt.len);
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!open) {
        s->stmt.len = 0;
        if (*p == '.') {
            s->stmt_line = s->line_no;
            og_shell_dot(s, p);
            return;
        }
        if (!*p) return;
        s->stmt_line = s->line_no;
    }
    og_buf_append_str(&s->stmt, line);
    og_buf_append_byte(&s->stmt, '\n');
    size_t end;
    while (!s->quit && (end = og_shell_stmt_end((const char *)s->stmt.data, s->stmt.len)) > 0) {
        const char *src = (const char *)s->stmt.data;
        size_t len = end;
        if (src[len - 1] == ';') len--; /* `;` only ends the statement */
        if (!og_shell_stmt_blank(src, len)) run_stmt(s, src, len);
        /* what follows on the line may start the next statement */
        unsigned used = count_lines(src, end);
        memmove(s->stmt.data, s->stmt.data + end, s->stmt.len - end);
        s->stmt.len -= end;
        s->stmt_line += used;
        if (og_shell_stmt_blank((const char *)s->stmt.data, s->stmt.len)) s->stmt.len = 0;
    }
}

/* A statement left open at the end of the input. */
static void flush_open_stmt(og_shell *s)
{
    if (!s->stmt.len || og_shell_stmt_blank((const char *)s->stmt.data, s->stmt.len)) return;
    og_shell_error(s, "parse: the statement is not complete at the end of %s (a `}` or `;` is missing)", s->source);
    s->stmt.len = 0;
}

static void read_stream(og_shell *s, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while (!s->quit && (n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        og_shell_feed(s, line);
    }
    free(line);
    flush_open_stmt(s);
}

/* -c TEXT: its lines as a script's, then the end of the input. */
static void run_command(og_shell *s, const char *text)
{
    while (!s->quit && *text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        char *line = strndup(text, n);
        if (!line) return;
        og_shell_feed(s, line);
        free(line);
        text += n + (nl != NULL);
    }
    flush_open_stmt(s);
}

int og_shell_read_file(og_shell *s, const char *path)
{
    if (s->read_depth >= 8) {
        og_shell_error(s, "invalid: .read %s: nested more than 8 deep", path);
        return 1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        og_shell_error(s, "io: cannot read %s: %s", path, strerror(errno));
        return 1;
    }
    /* the file is a nested input: its own name, line numbers and open statement */
    const char *src = s->source;
    unsigned line_no = s->line_no, stmt_line = s->stmt_line;
    og_buf outer = s->stmt;
    s->stmt = (og_buf)OG_BUF_INIT;
    int errors = s->errors, quit = s->quit;
    s->source = path;
    s->line_no = 0;
    s->read_depth++;
    read_stream(s, f);
    s->read_depth--;
    fclose(f);
    og_buf_free(&s->stmt);
    s->stmt = outer;
    s->source = src;
    s->line_no = line_no;
    s->stmt_line = stmt_line;
    s->quit = quit; /* .quit in a file ends the file */
    return s->errors > errors;
}

/* ---- the terminal: libedit ----------------------------------------------------------------- */

static og_shell *cur; /* libedit's callbacks carry no context */

/* Reads one character for libedit: a UTF-8 sequence as one code point, and at a Ctrl-C a line
 * break that ends the line being typed (readline() then returns it and the loop drops it). */
static int shell_getc(FILE *f)
{
    unsigned char c[4];
    for (;;) {
        ssize_t n = read(fileno(f), c, 1);
        if (n == 1) break;
        if (n == 0) return EOF;
        if (errno != EINTR) return EOF;
        if (interrupted) return '\n';
    }
    int need = c[0] >= 0xF0 ? 3 : c[0] >= 0xE0 ? 2 : c[0] >= 0xC0 ? 1 : 0;
    int cp = need == 3 ? c[0] & 0x07 : need == 2 ? c[0] & 0x0F : need == 1 ? c[0] & 0x1F : c[0];
    for (int i = 1; i <= need; i++) {
        if (read(fileno(f), c + i, 1) != 1) return cp;
        cp = (cp << 6) | (c[i] & 0x3F);
    }
    return cp;
}

static char *complete_gen(const char *text, int state)
{
    (void)text;
    static og_shell_words words;
    static size_t next;
    if (!state) {
        og_shell_words_free(&words);
        next = 0;
        /* rl_line_buffer and rl_point give the word's context; start is the word's first byte */
        size_t end = (size_t)rl_point, start = end;
        const char *line = rl_line_buffer;
        while (start > 0 && !strchr(" \t\n{}()[],:;=<>!+-*/\"", line[start - 1])) start--;
        if (line[0] == '.' && start > 0) og_shell_refresh_names(cur); /* a branch made since, by anyone */
        og_buf st = OG_BUF_INIT;
        if (cur->stmt.len) og_buf_append(&st, cur->stmt.data, cur->stmt.len);
        og_shell_complete(&words, &cur->names, og_buf_cstr(&st), line, start, end);
        og_buf_free(&st);
    }
    return next < words.n ? strdup(words.v[next++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never fall back to file names */
    char **m = rl_completion_matches(text, complete_gen);
    /* a property or a variable is usually followed by more punctuation than a space */
    rl_completion_append_character = text[0] == '$' ? '\0' : ' ';
    return m;
}

static void history_path(char *out, size_t cap)
{
    const char *home = getenv("OMNIGRAPH_HOME"), *h = getenv("HOME");
    char dir[1024];
    if (home && *home) snprintf(dir, sizeof dir, "%s", home);
    else if (h && *h) snprintf(dir, sizeof dir, "%s/.omnigraph", h);
    else {
        out[0] = 0;
        return;
    }
    mkdir(dir, 0700); /* may exist */
    snprintf(out, cap, "%s/history", dir);
}

static void prompt(const og_shell *s, char *out, size_t cap, int continued)
{
    char head[320];
    if (s->commit[0]) snprintf(head, sizeof head, "%s@%.10s", s->branch, s->commit);
    else snprintf(head, sizeof head, "%s", s->branch);
    if (!continued) snprintf(out, cap, "%s> ", head);
    else snprintf(out, cap, "%*s> ", (int)strlen(head), "...");
}

static void interactive_loop(og_shell *s)
{
    char hist[1200];
    history_path(hist, sizeof hist);
    using_history();
    stifle_history(2000);
    if (hist[0]) read_history(hist);
    rl_readline_name = "omnigraph";
    rl_catch_signals = 0;
    rl_getc_function = shell_getc;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n{}()[],:;=<>!+-*/\"";
    rl_completer_word_break_characters = (char *)rl_basic_word_break_characters;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: a read at the prompt returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    s->be.ops->set_cancel(s->be.self, &interrupted);
    printf("omnigraph shell %s: %s, branch %s (%s). .help for help, .quit to leave.\n", OG_VERSION_STRING, s->graph,
           s->branch, s->be.ops->kind);
    og_buf entry = OG_BUF_INIT; /* the lines of the statement being typed, for the history */
    while (!s->quit) {
        char p[400];
        int open = s->stmt.len && !og_shell_stmt_blank((const char *)s->stmt.data, s->stmt.len);
        prompt(s, p, sizeof p, open);
        fflush(stdout);
        interrupted = 0;
        char *line = readline(p);
        if (interrupted) { /* Ctrl-C at the prompt: drop what was typed */
            free(line);
            interrupted = 0;
            s->stmt.len = 0;
            entry.len = 0;
            printf("^C\n");
            continue;
        }
        if (!line) {
            putchar('\n');
            break;
        }
        if (entry.len) og_buf_append_byte(&entry, ' ');
        og_buf_append_str(&entry, line);
        og_shell_feed(s, line);
        free(line);
        int still_open = s->stmt.len && !og_shell_stmt_blank((const char *)s->stmt.data, s->stmt.len);
        if (!still_open) { /* one history entry per statement, its lines joined */
            const char *e = og_buf_cstr(&entry);
            while (*e == ' ') e++;
            if (!og_shell_stmt_blank(e, strlen(e))) { /* a comment alone is not worth recalling */
                add_history(e);
                if (hist[0]) write_history(hist);
            }
            entry.len = 0;
        }
    }
    og_buf_free(&entry);
    s->be.ops->set_cancel(s->be.self, NULL);
}

/* ---- arguments ------------------------------------------------------------------------------ */

static const char *usage_text =
    "usage: omnigraph shell [--store ROOT | ROOT] [--branch B] [--as ACTOR] [--format table|json|csv]\n"
    "       omnigraph shell --server URL --graph ID [--branch B]\n"
    "       omnigraph shell --store ROOT -c 'STATEMENTS'\n"
    "\n"
    "An interactive session on one graph: type queries and mutations (they run when their braces\n"
    "close, or at `;`), dot commands (.help lists them), Tab completes names from the graph.\n"
    "With stdin not a terminal it reads a script: no prompt, exit status 1 when anything failed.\n"
    "  --store ROOT       the graph: a directory or s3://bucket/prefix (or $OMNIGRAPH_STORE)\n"
    "  --branch B         the branch read and written (default main; .branch switches)\n"
    "  --as ACTOR         the actor recorded on the commits mutations publish\n"
    "  --format F         how rows print: table (default), json or csv (.format switches)\n"
    "  -c TEXT            run TEXT (statements and dot commands, as a script) and exit\n"
    "  --server URL --graph ID   a graph served by omnigraph-server (docs/shell.md)\n"
    "History: $OMNIGRAPH_HOME/history, else ~/.omnigraph/history.  docs/shell.md has the rest.\n";

static int usage_error(const char *fmt, const char *a)
{
    fputs("omnigraph shell: ", stderr);
    fprintf(stderr, fmt, a);
    fputs("\n(see `omnigraph shell --help`)\n", stderr);
    return 2;
}

int og_shell_main(int argc, char **argv, og_shell_remote_fn remote)
{
    const char *store = NULL, *branch = NULL, *server = NULL, *graph = NULL, *actor = NULL, *format = NULL,
               *command = NULL;
    struct {
        const char *flag;
        const char **val;
    } flags[] = {{"--store", &store}, {"--branch", &branch}, {"--server", &server}, {"--graph", &graph},
                 {"--as", &actor},    {"--format", &format}, {"-c", &command}};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return 0;
        }
        size_t k = 0;
        for (; k < sizeof flags / sizeof flags[0]; k++)
            if (!strcmp(argv[i], flags[k].flag)) break;
        if (k < sizeof flags / sizeof flags[0]) {
            if (*flags[k].val) return usage_error("%s given twice", argv[i]);
            if (i + 1 >= argc) return usage_error("%s needs a value", argv[i]);
            *flags[k].val = argv[++i];
        } else if (argv[i][0] == '-') {
            return usage_error("unknown flag '%s'", argv[i]);
        } else if (!store) {
            store = argv[i];
        } else {
            return usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (!store && !server) store = getenv("OMNIGRAPH_STORE");
    if (store && !*store) store = NULL;
    if (server && store) return usage_error("%s", "give --store ROOT or --server URL, not both");
    if (!!server != !!graph) return usage_error("%s", "--server URL goes with --graph ID");
    if (!server && !store) return usage_error("%s", "no graph given: --store ROOT (or $OMNIGRAPH_STORE)");
    og_format fmt = OG_FORMAT_TABLE;
    if (format && !strcmp(format, "json")) fmt = OG_FORMAT_JSON;
    else if (format && !strcmp(format, "csv")) fmt = OG_FORMAT_CSV;
    else if (format && strcmp(format, "table")) return usage_error("--format is table, json or csv, not %s", format);
    og_shell s;
    memset(&s, 0, sizeof s);
    og_status st;
    if (!server) st = og_shell_backend_local(&s.be, store, actor);
    else if (remote) st = remote(&s.be, server, graph);
    else
        st = og_err(OG_ERR_UNSUPPORTED, "--server %s --graph %s: this program has no remote backend; open the graph "
                                        "with --store ROOT", server, graph);
    if (st) {
        fprintf(stderr, "omnigraph shell: %s: %s\n", og_status_name(st), og_error_message());
        return 1;
    }
    s.graph = server ? graph : store;
    snprintf(s.branch, sizeof s.branch, "%s", branch ? branch : "main");
    s.fmt = fmt;
    s.interactive = !command && isatty(STDIN_FILENO);
    s.maxrows = s.interactive ? 100 : 0;
    s.source = command ? "<-c>" : "<stdin>";
    og_shell_refresh_names(&s);
    int ok = 1;
    if (branch) {
        ok = 0;
        for (size_t i = 0; i < s.names.branches.n; i++) ok |= !strcmp(s.names.branches.v[i], branch);
        if (!ok) fprintf(stderr, "omnigraph shell: not_found: no branch %s\n", branch);
    }
    if (ok) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        cur = &s;
        if (command) run_command(&s, command);
        else if (s.interactive) interactive_loop(&s);
        else read_stream(&s, stdin);
        cur = NULL;
    }
    s.be.ops->close(s.be.self);
    og_shell_names_free(&s.names);
    og_buf_free(&s.stmt);
    free(s.params);
    if (!ok) return 1;
    return !s.interactive && s.errors ? 1 : 0;
}
