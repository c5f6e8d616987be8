#!/usr/bin/env bash
# End-to-end check of pbem behind Postfix on one Debian machine. Run as root:
#
#   bash deploy/e2e/postfix.sh
#
# In a fresh temporary directory every run, it
#   1. installs postfix and swaks when they are missing (no questions asked);
#   2. starts a private Postfix instance with the settings of deploy/postfix/
#      (its own main.cf, master.cf, queue and log under the temporary directory;
#      /etc/postfix is not touched and a Postfix already running keeps running):
#        civ.test      the game domain, handed by LMTP to `pbem serve --lmtp` on
#                      127.0.0.1, recipient_delimiter = +, only pbem+...@civ.test taken;
#        players.test  the players' domain, delivered into Maildirs under the
#                      temporary directory (virtual mailbox domain, static uid/gid);
#   3. creates a SQLite database and a game of 3 players at players.test
#      (PBEM_DOMAIN=civ.test);
#   4. starts `pbem serve --lmtp --listen 127.0.0.1:PORT --relay smtp://127.0.0.1:PORT2`
#      (PORT2 is the private Postfix's SMTP port);
#   5. waits for the start letters and the first prompt in the players' Maildirs;
#   6. has the prompted player reply with swaks through Postfix: to the prompt's
#      Reply-To, from the player's address, with the orders of the prompt's order
#      block as the body and the prompt quoted below them, as a mail client does;
#   7. waits for the acknowledgement "Orders received" in that player's Maildir and
#      checks that it lists every order as accepted.
# It prints one PASS line and exits 0, or prints what it found (Maildirs, queue,
# Postfix log, pbem output) and exits 1. What it started is stopped and the
# temporary directory removed, pass or fail.
#
# Environment:
#   PBEM                  the pbem command (default: the repository's .venv/bin/pbem,
#                         else pbem on PATH)
#   PBEM_E2E_TIMEOUT      seconds to wait for each step's mail (default 40)
#   PBEM_E2E_KEEP=1       keep the temporary directory
#   PBEM_E2E_TRANSPORT    lmtp (default), or pipe: Postfix hands the game domain's mail to
#                         `pbem ingest` (deploy/postfix/master.cf.snippet) and `pbem tick`
#                         runs every second in place of pbem-tick.timer; no `pbem serve`. The pipe runs
#                         pbem as PBEM_E2E_PIPE_USER (default nobody), which must be able to
#                         execute $PBEM (a virtualenv made from a Python under /root is not).
set -euo pipefail

GAME_DOMAIN=civ.test
PLAYER_DOMAIN=players.test
PLAYERS=(ann ben cy)
GAME=e2e
TIMEOUT=${PBEM_E2E_TIMEOUT:-40}
MODE=${PBEM_E2E_TRANSPORT:-lmtp}
PIPE_USER=${PBEM_E2E_PIPE_USER:-nobody}
VMAIL_ID=5000 # uid and gid of the players' Maildirs; no such user is needed

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
START=$(date +%s)

say() { printf 'e2e: %s\n' "$*"; }

[[ $(id -u) == 0 ]] || { echo "e2e: run this as root (it installs packages and starts Postfix)" >&2; exit 1; }
[[ $MODE == lmtp || $MODE == pipe ]] || { echo "e2e: PBEM_E2E_TRANSPORT is lmtp or pipe, not '$MODE'" >&2; exit 1; }

# --- 1. packages -------------------------------------------------------------------------
if ! command -v postfix >/dev/null || ! command -v swaks >/dev/null; then
    say "installing postfix and swaks"
    export DEBIAN_FRONTEND=noninteractive
    # "No configuration": installs without a question, writes no main.cf, starts nothing.
    echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postfix swaks >/dev/null
fi

# --- pbem ------------------------------------------------------------------------------
if [[ -z ${PBEM:-} ]]; then
    if [[ -x $REPO/.venv/bin/pbem ]]; then
        PBEM=$REPO/.venv/bin/pbem
    elif command -v pbem >/dev/null; then
        PBEM=$(command -v pbem)
    else
        echo "e2e: no pbem: run 'make install' in $REPO, or put pbem on PATH" >&2
        exit 1
    fi
fi
PY=$(dirname "$PBEM")/python3
[[ -x $PY ]] || PY=python3
if [[ $MODE == pipe ]] && ! runuser -u "$PIPE_USER" -- "$PBEM" --help >/dev/null 2>&1; then
    echo "e2e: user $PIPE_USER cannot run $PBEM; the pipe mode needs a pbem that user can execute" >&2
    exit 1
fi

# --- the temporary directory, and cleaning up --------------------------------------------
W=$(mktemp -d /tmp/pbem-e2e.XXXXXX)
chmod 755 "$W" # Postfix's daemons (user postfix) must reach the queue inside it
CONF=$W/postfix-etc
SERVER_PID=
POSTFIX_STARTED=

cleanup() {
    local status=$?
    set +e
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        # pbem serve stops on SIGTERM; the loop of `pbem tick` (pipe) when it sees $W/stop
        [[ $MODE == lmtp ]] && kill "$SERVER_PID"
        touch "$W/stop"
        for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
    if [[ -n $POSTFIX_STARTED ]]; then
        local master
        master=$(tr -d ' ' <"$W/spool/pid/master.pid" 2>/dev/null)
        postfix -c "$CONF" stop >/dev/null 2>&1
        # `postfix stop` returns before the master is gone
        for _ in $(seq 100); do
            if [[ -z $master ]] || ! kill -0 "$master" 2>/dev/null; then break; fi
            sleep 0.1
        done
    fi
    if [[ ${PBEM_E2E_KEEP:-} == 1 ]]; then
        say "kept $W"
    else
        rm -rf "$W"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    set +e
    echo "FAIL postfix e2e ($MODE): $*"
    echo "--- the players' Maildirs"
    "$PY" "$HERE/maildir.py" list "$W/vmail" 2>&1 | cut -f 1-3
    echo "--- postqueue -p"
    postqueue -c "$CONF" -p 2>&1 | tail -n 20
    echo "--- the Postfix log ($W/postfix.log), last 40 lines"
    tail -n 40 "$W/postfix.log" 2>/dev/null || echo "(no log)"
    echo "--- pbem output, last 40 lines"
    tail -n 40 "$W/pbem.log" 2>/dev/null || echo "(no output)"
    exit 1
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
SMTP_PORT=$(free_port)
LMTP_PORT=$(free_port)
while [[ $LMTP_PORT == "$SMTP_PORT" ]]; do LMTP_PORT=$(free_port); done

# pbem as the pipe transport runs it (as PIPE_USER), or as root
export PBEM_DOMAIN=$GAME_DOMAIN
export PBEM_DATABASE_URL=sqlite:///$W/pbem/pbem.sqlite
unset PBEM_CONFIG PBEM_SMTP_RELAY PBEM_MAILDIR PBEM_PROTOCOL PBEM_LISTEN_HOST PBEM_LISTEN_PORT
pbem() {
    if [[ $MODE == pipe ]]; then
        runuser -u "$PIPE_USER" -- "$PBEM" "$@"
    else
        "$PBEM" "$@"
    fi
}

# --- 2. Postfix --------------------------------------------------------------------------
mkdir -p "$CONF" "$W/spool" "$W/vmail" "$W/pbem" # postfix fills spool/ itself
chown "$VMAIL_ID:$VMAIL_ID" "$W/vmail"
[[ $MODE == pipe ]] && chown "$PIPE_USER" "$W/pbem"
for p in "${PLAYERS[@]}" postmaster; do echo "$p@$PLAYER_DOMAIN $PLAYER_DOMAIN/$p/"; done >"$CONF/vmailbox"

# The operator's files of deploy/postfix/, made fit for this machine: the test domain,
# pbem's port, and texthash: tables (read as they are, without postmap) in $CONF.
SHIPPED=$HERE/../postfix
render() {
    sed -e "s/civ\.example\.org/$GAME_DOMAIN/g" \
        -e "s/127\.0\.0\.1:8025/127.0.0.1:$LMTP_PORT/g" \
        -e "s|hash:/etc/postfix/|texthash:$CONF/|g" \
        -e "s/operator@example\.org/postmaster@$PLAYER_DOMAIN/g" "$SHIPPED/$1"
}
if [[ $MODE == lmtp ]]; then
    render transport >"$CONF/transport"
else # the shipped transport file's pipe line instead of its LMTP line
    render transport | sed -e 's/^\([^#].*lmtp:\)/#\1/' -e 's/^#\([^ ]* *pbem:\)/\1/' >"$CONF/transport"
fi
render pbem_recipients >"$CONF/pbem_recipients"
render virtual >"$CONF/virtual"

# A master.cf of its own: no chroot (the queue is a plain temporary directory) and
# smtpd on a free loopback port, so a Postfix already on port 25 is no obstacle.
cat >"$CONF/master.cf" <<EOF
127.0.0.1:$SMTP_PORT inet n - n - - smtpd
pickup    unix  n  -  n  60    1  pickup
cleanup   unix  n  -  n  -     0  cleanup
qmgr      unix  n  -  n  300   1  qmgr
rewrite   unix  -  -  n  -     -  trivial-rewrite
bounce    unix  -  -  n  -     0  bounce
defer     unix  -  -  n  -     0  bounce
trace     unix  -  -  n  -     0  bounce
verify    unix  -  -  n  -     1  verify
flush     unix  n  -  n  1000? 0  flush
proxymap  unix  -  -  n  -     -  proxymap
smtp      unix  -  -  n  -     -  smtp
relay     unix  -  -  n  -     -  smtp
showq     unix  n  -  n  -     -  showq
error     unix  -  -  n  -     -  error
retry     unix  -  -  n  -     -  error
discard   unix  -  -  n  -     -  discard
local     unix  -  n  n  -     -  local
virtual   unix  -  n  n  -     -  virtual
lmtp      unix  -  -  n  -     -  lmtp
anvil     unix  -  -  n  -     1  anvil
scache    unix  -  -  n  -     1  scache
postlog   unix-dgram n - n - 1  postlogd
EOF
if [[ $MODE == pipe ]]; then
    # deploy/postfix/master.cf.snippet, run as PIPE_USER, its wrapper told where pbem
    # and the settings are (pipe(8) passes almost no environment)
    render master.cf.snippet | grep -v '^#' |
        sed -e "s/user=pbem/user=$PIPE_USER/" \
            -e "s|argv=/usr/local/bin/pbem-ingest|argv=/usr/bin/env PBEM=$PBEM PBEM_DATABASE_URL=$PBEM_DATABASE_URL PBEM_DOMAIN=$GAME_DOMAIN /bin/sh $SHIPPED/pbem-ingest|" \
            >>"$CONF/master.cf"
fi

# main.cf: what makes this a private instance, then the lines of main.cf.snippet
: >"$CONF/main.cf"
postconf -c "$CONF" -e \
    "compatibility_level = 3.6" \
    "queue_directory = $W/spool" \
    "data_directory = $W/data" \
    "myhostname = mail.$GAME_DOMAIN" \
    "mydomain = $GAME_DOMAIN" \
    "myorigin = \$myhostname" \
    "mydestination =" \
    "inet_interfaces = 127.0.0.1" \
    "inet_protocols = ipv4" \
    "mynetworks = 127.0.0.0/8" \
    "alias_maps =" \
    "alias_database =" \
    "local_transport = error:no local mail here" \
    "smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination" \
    "maillog_file = $W/postfix.log" \
    "maillog_file_prefixes = $W" \
    "virtual_mailbox_domains = $PLAYER_DOMAIN" \
    "virtual_mailbox_base = $W/vmail" \
    "virtual_mailbox_maps = texthash:$CONF/vmailbox" \
    "virtual_uid_maps = static:$VMAIL_ID" \
    "virtual_gid_maps = static:$VMAIL_ID"
SNIPPET=$(render main.cf.snippet)
[[ $MODE == pipe ]] && SNIPPET=$(sed 's/^#\(pbem_destination_recipient_limit\)/\1/' <<<"$SNIPPET")
mapfile -t SETTINGS < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' <<<"$SNIPPET")
postconf -c "$CONF" -e "${SETTINGS[@]}"

postfix -c "$CONF" check >"$W/postfix-start.log" 2>&1 || fail "postfix check refused the configuration: $(cat "$W/postfix-start.log")"
postfix -c "$CONF" start >>"$W/postfix-start.log" 2>&1 || fail "postfix did not start: $(cat "$W/postfix-start.log")"
POSTFIX_STARTED=1
for _ in $(seq 100); do listening "$SMTP_PORT" && break; sleep 0.1; done
listening "$SMTP_PORT" || fail "Postfix is not listening on 127.0.0.1:$SMTP_PORT"
if [[ $MODE == lmtp ]]; then
    say "Postfix on 127.0.0.1:$SMTP_PORT: $GAME_DOMAIN by LMTP to 127.0.0.1:$LMTP_PORT, $PLAYER_DOMAIN into $W/vmail"
else
    say "Postfix on 127.0.0.1:$SMTP_PORT: $GAME_DOMAIN by pipe to 'pbem ingest' as $PIPE_USER, $PLAYER_DOMAIN into $W/vmail"
fi

# --- 3. the game -----------------------------------------------------------------------
cd "$W/pbem"
pbem game create "$GAME" \
    --player "Ann:ann@$PLAYER_DOMAIN" \
    --player "Ben:ben@$PLAYER_DOMAIN" \
    --player "Cy:cy@$PLAYER_DOMAIN" >"$W/create.log" 2>&1 ||
    fail "pbem game create failed: $(cat "$W/create.log")"
say "$(head -n 1 "$W/create.log")"

# --- 4. pbem serve (or, with the pipe, pbem tick as pbem-tick.timer runs it) -------------
if [[ $MODE == lmtp ]]; then
    "$PBEM" serve --lmtp --listen "127.0.0.1:$LMTP_PORT" --relay "smtp://127.0.0.1:$SMTP_PORT" >"$W/pbem.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 150); do
        listening "$LMTP_PORT" && break
        kill -0 "$SERVER_PID" 2>/dev/null || fail "pbem serve exited"
        sleep 0.1
    done
    listening "$LMTP_PORT" || fail "pbem serve is not listening on 127.0.0.1:$LMTP_PORT"
    say "pbem serve (pid $SERVER_PID) takes LMTP on 127.0.0.1:$LMTP_PORT, relays through 127.0.0.1:$SMTP_PORT"
else
    export PBEM_SMTP_RELAY=smtp://127.0.0.1:$SMTP_PORT
    (while [[ ! -e $W/stop ]]; do pbem tick; sleep 1; done) >"$W/pbem.log" 2>&1 &
    SERVER_PID=$!
    say "pbem tick every second (pid $SERVER_PID), relays through 127.0.0.1:$SMTP_PORT"
fi

letters() { "$PY" "$HERE/maildir.py" list "$W/vmail"; }

wait_for() { # wait_for DESCRIPTION COMMAND...: until COMMAND succeeds, or fail after TIMEOUT
    local what=$1
    shift
    for _ in $(seq $((TIMEOUT * 5))); do
        "$@" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || fail "pbem stopped while waiting for $what"
        sleep 0.2
    done
    fail "$what did not arrive within ${TIMEOUT}s"
}

every_player_has_a_start_letter() {
    local p list
    list=$(letters)
    for p in "${PLAYERS[@]}"; do
        grep -q -P "^start\t$p@$PLAYER_DOMAIN\t" <<<"$list" || return 1
    done
}
a_prompt() { grep -q -P '^prompt\t' <<<"$(letters)"; }

# --- 5. the start letters and the first prompt, through Postfix --------------------------
wait_for "a start letter in each player's Maildir" every_player_has_a_start_letter
wait_for "a prompt" a_prompt
PROMPT=$(grep -m 1 -P '^prompt\t' <<<"$(letters)")
PROMPT_FILE=$(cut -f 4 <<<"$PROMPT")
say "start letters in ${#PLAYERS[@]} Maildirs; prompt to $(cut -f 2 <<<"$PROMPT"): $(cut -f 3 <<<"$PROMPT")"

# --- 6. the player replies with a standard client ----------------------------------------
mapfile -t R < <("$PY" "$HERE/maildir.py" reply "$PROMPT_FILE" "$W/reply.txt")
[[ ${#R[@]} == 6 ]] || fail "cannot read the prompt $PROMPT_FILE"
PLAYER=${R[0]} REPLY_TO=${R[1]} SUBJECT=${R[2]} IN_REPLY_TO=${R[3]} REFERENCES=${R[4]} ORDERS=${R[5]}
[[ $REPLY_TO == pbem+*@$GAME_DOMAIN ]] || fail "the prompt's Reply-To is '$REPLY_TO', not pbem+...@$GAME_DOMAIN"
[[ -n $ORDERS ]] || fail "the prompt's order block is empty"
say "$PLAYER replies to $REPLY_TO: $ORDERS"
swaks --server "127.0.0.1:$SMTP_PORT" --helo "client.$PLAYER_DOMAIN" \
    --from "$PLAYER" --to "$REPLY_TO" \
    --header "From: $PLAYER" --header "To: $REPLY_TO" --header "Subject: $SUBJECT" \
    --header "In-Reply-To: $IN_REPLY_TO" --header "References: $REFERENCES" \
    --body "@$W/reply.txt" >"$W/swaks.log" 2>&1 ||
    fail "swaks could not hand the reply to Postfix: $(tail -n 5 "$W/swaks.log")"

# --- 7. the acknowledgement comes back through Postfix -----------------------------------
an_ack() { grep -q -P "^ack\t$PLAYER\t" <<<"$(letters)"; }
wait_for "an acknowledgement to $PLAYER" an_ack
ACK=$(grep -m 1 -P "^ack\t$PLAYER\t" <<<"$(letters)")
ACK_SUBJECT=$(cut -f 3 <<<"$ACK")
[[ $ACK_SUBJECT == "[$GAME] Orders received" ]] || fail "the acknowledgement says '$ACK_SUBJECT'"
ACK_TEXT=$("$PY" "$HERE/maildir.py" text "$(cut -f 4 <<<"$ACK")")
ACCEPTED=$(sed -n '/^ACCEPTED FROM THIS MESSAGE/,/^$/p' <<<"$ACK_TEXT")
IFS='|' read -ra WANT <<<"$ORDERS"
for order in "${WANT[@]}"; do
    order=${order#"${order%%[![:space:]]*}"}
    order=${order%"${order##*[![:space:]]}"}
    grep -qiF "$order" <<<"$ACCEPTED" || fail "the acknowledgement does not list '$order' as accepted: $ACK_TEXT"
done

OUT=$(grep -c "relay=virtual, .*status=sent" "$W/postfix.log" || true)
if [[ $MODE == lmtp ]]; then
    IN=$(grep -c "relay=127.0.0.1\[127.0.0.1\]:$LMTP_PORT, .*status=sent" "$W/postfix.log" || true)
    HOW="over LMTP to pbem serve"
else
    IN=$(grep -c "relay=pbem, .*status=sent" "$W/postfix.log" || true)
    HOW="by pipe to pbem ingest"
fi
[[ $IN -ge 1 ]] || fail "the Postfix log shows no delivery $HOW"
echo "PASS postfix e2e ($MODE): Postfix delivered $OUT letters of pbem into $PLAYER_DOMAIN Maildirs and $IN reply $HOW; '$ACK_SUBJECT' back to $PLAYER; $(($(date +%s) - START))s"
