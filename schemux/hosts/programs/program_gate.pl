# The gate, in Perl: what schemux/program_gate.py does, with the same protocol, started in
# about 2 ms instead of a Python's 10 or more. Run as
#   perl -X -t -C0 program_gate.pl SYSCALLS DIRECTORY CWD STDIN STDERR GRACE N ENV*N ARGV...
# SYSCALLS is "PRCTL,RT_SIGPROCMASK,RT_SIGTIMEDWAIT,RT_SIGACTION", the system call numbers
# of the running architecture (schemux's table, schemux.hosts.programs.gate): the gate makes these
# calls itself, through Perl's syscall, as it loads nothing beyond perl-base (Debian's
# Essential package; POSIX alone would cost 8 ms, Fcntl and Errno 1 ms each, warnings 2 ms:
# their few numbers are below). -t: PERL5OPT, PERL5LIB and PERLIO from the environment are
# ignored (what would taint the gate's own work only warns); -X: no warning ever reaches the
# terminal; -C0: PERL_UNICODE is ignored too, so every argument is the bytes schemux gave.
#
# The gate holds the program until schemux writes a table of random tokens, one per report
# (exit status 0-255, and "x" run or "n" not run), into a one-shot FIFO; the gate removes
# the FIFO and keeps the table in its own memory (it is not dumpable: no ptrace, no
# /proc/PID/mem). Its end marker carries the token of its report, so a process that
# steals one marker off the copy learns nothing of any other report's token.
#
# A child subreaper: every descendant whose parent ends becomes the gate's child. Signals
# (blocked, taken with rt_sigtimedwait): SIGCHLD reaps; SIGUSR2 stops the program (SIGTERM
# to every descendant, SIGKILL to what is left after GRACE seconds, timed by SIGALRM);
# SIGUSR1 releases the gate after its marker; SIGHUP and SIGTERM end the tree at once. On
# its way out the gate kills and reaps every descendant.
use strict;

# Linux's numbers, the same on every architecture of schemux's table (x86 and asm-generic)
sub O_RDONLY () { 0 }
sub O_WRONLY () { 1 }
sub O_CREAT () { 0100 }
sub O_TRUNC () { 01000 }
sub O_NONBLOCK () { 04000 }
sub F_GETFL () { 3 }
sub F_SETFL () { 4 }
sub ENOENT () { 2 }
sub SIGHUP () { 1 }
sub SIGINT () { 2 }
sub SIGQUIT () { 3 }
sub SIGKILL () { 9 }
sub SIGSTOP () { 19 }
sub SIGUSR1 () { 10 }
sub SIGUSR2 () { 12 }
sub SIGALRM () { 14 }
sub SIGTERM () { 15 }
sub SIGCHLD () { 17 }
sub SIGRTMAX () { 64 }
sub SIG_BLOCK () { 0 }
sub SIG_SETMASK () { 2 }
sub SIGSET_BYTES () { 8 }
sub WNOHANG () { 1 }
sub PR_SET_DUMPABLE () { 4 }
sub PR_SET_CHILD_SUBREAPER () { 36 }
sub TOKEN_BYTES () { 8 }
sub TABLE_BYTES () { 4096 }    # 256 statuses x 2 flags x 8 bytes: one atomic FIFO write
sub SETTLE_SECONDS () { 5 }    # at most this long killing a tree that keeps forking

my ($syscalls, $directory, $cwd, $stdin_path, $stderr_path, $grace, $count) = splice @ARGV, 0, 7;
# numbers, not strings: syscall passes a string as a pointer to it
my ($SYS_prctl, $SYS_sigprocmask, $SYS_sigtimedwait, $SYS_sigaction) = map { 0 + $_ } split /,/, $syscalls;
my @assignments = splice @ARGV, 0, 0 + $count;
my @argv = @ARGV;

sub sigset {
    my $mask = 0;
    $mask |= 1 << ($_ - 1) for @_;
    return pack 'Q', $mask;
}

my $watched = sigset(SIGCHLD, SIGHUP, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM);

sub become_subreaper {
    # a child subreaper, and not dumpable: a process of the same user (the program) can
    # then neither ptrace the gate nor read its memory, whatever Yama's ptrace_scope
    syscall($SYS_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 or exit 125;
    syscall($SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 or exit 125;
}

sub read_table {
    # not blocking to open (without a writer, schemux has given up: the read sees the
    # end), blocking to read (until schemux writes, or closes its end)
    my $path = "$directory/secret";
    sysopen(my $fifo, $path, O_RDONLY | O_NONBLOCK) or exit 125;
    my $flags = fcntl($fifo, F_GETFL, 0);
    fcntl($fifo, F_SETFL, $flags & ~O_NONBLOCK);
    my $table = '';
    while (length $table < TABLE_BYTES) {
        my $got = sysread($fifo, $table, TABLE_BYTES - length $table, length $table);
        last unless $got;
    }
    close $fifo;
    unlink $path;
    return $table;
}

sub descendants {
    # every process below the gate, from each thread's children list
    my @found;
    my @stack = ($$);
    while (@stack) {
        my $pid = pop @stack;
        opendir(my $tasks, "/proc/$pid/task") or next;
        for my $thread (grep { /^\d+$/ } readdir $tasks) {
            open(my $children, '<', "/proc/$pid/task/$thread/children") or next;
            my @kids = split ' ', join '', <$children>;
            push @found, @kids;
            push @stack, @kids;
        }
    }
    return @found;
}

sub exit_code {
    # as a shell reports it: the exit status, or 128+N for signal N
    my ($wait_status) = @_;
    return $wait_status & 127 ? 128 + ($wait_status & 127) : $wait_status >> 8;
}

sub start_child {
    # fork and exec the program; its pid, and whether it could not be run (the child says
    # so on a close-on-exec pipe, after writing the reason where its stderr goes)
    my ($mask) = @_;
    pipe(my $failed_r, my $failed_w) or exit 125;    # above $^F: close-on-exec
    my $pid = fork;
    exit 125 unless defined $pid;
    if ($pid == 0) {
        close $failed_r;
        syscall($SYS_sigprocmask, SIG_SETMASK, $mask, 0, SIGSET_BYTES);
        # every catchable signal at its default disposition, as a fresh shell gives a
        # program: the gate's C-c, and whatever the gate's own start ignored (nohup:
        # SIGHUP; signals above 31, glibc's own 32 and 33 among them, which perl's
        # sigaction cannot set): by the system call itself, SIG_DFL with no flags and no
        # mask being zeros in every layout of its struct
        my $default = "\0" x 32;
        for my $signum (1 .. SIGRTMAX) {
            syscall($SYS_sigaction, $signum, $default, 0, SIGSET_BYTES)
              unless $signum == SIGKILL || $signum == SIGSTOP;
        }
        my ($ok, $in, $err) = (1);
        # opened, their names go: no other process can open them from now on
        if (length $stdin_path) {
            $ok = sysopen($in, $stdin_path, O_RDONLY) && open(STDIN, '<&', $in)
              && unlink($stdin_path);
        }
        if ($ok && length $stderr_path) {
            $ok = sysopen($err, $stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600)
              && open(STDERR, '>&', $err) && unlink($stderr_path);
        }
        if ($ok) {
            $ok = chdir $cwd;
            if ($ok) {
                for my $assignment (@assignments) {
                    my ($key, $value) = split /=/, $assignment, 2;
                    $ENV{$key} = $value;
                }
                exec { $argv[0] } @argv;    # returns only when it failed
            }
        }
        my $missing = $! == ENOENT;
        my $code = $missing ? 127 : 126;
        my $reason = $missing && index($argv[0], '/') < 0 ? 'not found' : "$!";
        syswrite STDERR, "$argv[0]: $reason\n";
        syswrite $failed_w, 'n';
        exit $code;
    }
    close $failed_w;
    my $said = '';
    sysread $failed_r, $said, 1;
    close $failed_r;
    return ($pid, $said eq 'n');
}

# the terminal's C-c is for the program: the gate (in the same process group) stays
$SIG{INT} = $SIG{QUIT} = 'IGNORE';
# an ignored signal is discarded, blocked or not, so never waited for: the gate's start
# may have ignored SIGHUP (nohup) or others
$SIG{$_} = 'DEFAULT' for qw(CHLD HUP TERM USR1 USR2 ALRM);
# schemux's signals wait (blocked) until the program runs: a stop before then is carried
# out as soon as there is something to stop
my $mask = "\0" x SIGSET_BYTES;
syscall($SYS_sigprocmask, SIG_BLOCK, $watched, $mask, SIGSET_BYTES) == 0 or exit 125;
become_subreaper();
my $table = read_table();
exit 125 if length $table != TABLE_BYTES;    # schemux gave this program up before it started
chdir $cwd;    # so that tmux shows the program's directory as the pane's
my ($child, $failed) = start_child($mask);
my $flag = $failed ? 'n' : 'x';
my ($status, $reported, $stopping);

sub reap {
    while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
        $status = exit_code($?) if $pid == $child;
    }
}

sub report {
    return if !defined $status || $reported;
    $reported = 1;
    # the token of this report only: one marker read off the copy's FIFO tells nothing
    # of the token of any other
    my $index = 2 * $status + ($flag eq 'n' ? 1 : 0);
    my $token = unpack 'H*', substr($table, $index * TOKEN_BYTES, TOKEN_BYTES);
    syswrite STDOUT, "\e]7777;schemux-end;$status;$flag;$token\a";
}

sub end_tree {
    # kill and reap every descendant, until none is left (or a fork bomb outlasts
    # SETTLE_SECONDS)
    my $deadline = time + SETTLE_SECONDS;
    my $pause = pack 'q q', 0, 10_000_000;
    my $chld = sigset(SIGCHLD);
    while (time < $deadline) {
        reap();
        my @found = descendants();
        return unless @found;
        kill SIGKILL, @found;
        syscall($SYS_sigtimedwait, $chld, 0, $pause, SIGSET_BYTES);
    }
}

reap();
report();
# until released or the pane goes: report the end, carry out a stop
while (1) {
    my $signum = syscall($SYS_sigtimedwait, $watched, 0, 0, SIGSET_BYTES);
    if ($signum == SIGCHLD) {
        reap();
    } elsif ($signum == SIGUSR2 && !$stopping) {
        kill SIGTERM, descendants();
        $stopping = 1;
        alarm(int($grace + 0.999) || 1);
    } elsif ($signum == SIGUSR1 || $signum == SIGHUP || $signum == SIGTERM) {
        last;
    }
    if ($stopping && ($signum == SIGALRM || !descendants())) {
        # the grace is over, or nothing is left: kill whatever remains
        kill SIGKILL, descendants();
        $stopping = 0;
        alarm 0;
        reap();
    }
    report();
}
alarm 0;
end_tree();
exit(defined $status ? $status : 125);
