# schemux's helper on a remote host (schemux.hosts.programs.remote): one per host, one ssh
# session, however many programs run there. Run as
#   perl -e SCRIPT GATE_SCRIPT
# with nothing beyond perl-base. It makes a private 0700 runtime directory, keeps the
# Perl gate in it, and serves schemux over its stdin and stdout in frames: a frame is a
# 4-byte big-endian length and that many bytes of fields, each a 4-byte length and its
# bytes. The first field names the operation, the second is a request number (0: no reply
# wanted); replies are ("ok", N, ...) or ("err", N, reason). Unasked, it sends
# ("data", ID, BYTES) as a program's copy FIFO gives bytes, ("eof", ID) when the copy
# ends, ("exit", HANDLE) when a watched gate has exited, ("report", PID, LINE) when a
# shell's wrapper reported, and ("unreport", PID) when it dropped a gone shell's pipes.
#
# Its stdin closing (schemux exited, was killed, or the connection dropped) ends it: it
# sends SIGHUP to the gates it watches (each ends its program's whole tree) and removes
# the runtime directory. Values arrive as frame fields and are used as they are: no shell
# ever reads one.
use strict;
use POSIX ();
use Fcntl qw(O_RDONLY O_RDWR O_WRONLY O_CREAT O_EXCL O_TRUNC O_NONBLOCK);
use File::Path ();

sub SYS_PIDFD_SEND_SIGNAL () { 424 }    # the same number on every architecture
sub SYS_PIDFD_OPEN ()        { 434 }
sub POLL_SECONDS ()          { 0.02 }  # gates watched without a pidfd (Linux before 5.3)
sub READ_BYTES ()            { 65536 }
sub GATE_EXEC_POLLS ()       { 400 }   # of POLL_SECONDS / 4: two seconds for a gate's exec
sub COPY_OPEN_POLLS ()       { 1000 }  # of POLL_SECONDS / 4: five for the copy's writer

$SIG{PIPE} = 'IGNORE';
binmode STDOUT;
my ($gate_script) = @ARGV;

my $base = $ENV{TMPDIR};
# the directory's path goes into a shell command of tmux's (pipe-pane): plain characters only
$base = '/tmp' unless defined $base && $base =~ m{\A/[A-Za-z0-9/._-]*\z} && -d $base && -w _;
my $root;
{
    open(my $random, '<', '/dev/urandom') or die "no /dev/urandom: $!\n";
    for (1 .. 20) {
        my $bytes = '';
        sysread($random, $bytes, 8) == 8 or die "no random bytes: $!\n";
        my $name = "$base/schemux-remote-" . unpack('H*', $bytes);
        if (mkdir($name, 0700)) { $root = $name; last }
    }
    defined $root or die "cannot make a directory in $base: $!\n";
}

sub cleanup {
    return unless defined $root;
    File::Path::remove_tree($root);
    undef $root;
}
my (%copies, %handles);    # program id -> copy FIFO's fd; handle -> what it holds
my %stderrs;    # program id -> its stderr file, opened before its gate removes the name
sub finish {
    for my $held (values %handles) {
        signal_gate($held, 1) if $held->{pid};
    }
    cleanup();
    POSIX::_exit(0);
}
$SIG{TERM} = $SIG{HUP} = $SIG{INT} = \&finish;
END { cleanup() }

{
    my $path = "$root/program_gate.pl";
    sysopen(my $gate, $path, O_WRONLY | O_CREAT | O_EXCL, 0600) or die "cannot write $path: $!\n";
    print {$gate} $gate_script or die "cannot write $path: $!\n";
    close $gate or die "cannot write $path: $!\n";
}

sub send_frame {
    my $body = join '', map { pack('N/a*', defined $_ ? $_ : '') } @_;
    my $frame = pack('N', length $body) . $body;
    while (length $frame) {
        my $wrote = syswrite STDOUT, $frame;
        finish() unless $wrote;    # schemux is gone
        substr($frame, 0, $wrote) = '';
    }
}

sub program_directory {
    my ($id) = @_;
    die "bad program id\n" unless $id =~ /\A[a-z0-9]{1,64}\z/;
    return "$root/$id";
}

sub write_file {
    my ($path, $data) = @_;
    sysopen(my $file, $path, O_WRONLY | O_CREAT | O_EXCL, 0600) or die "cannot write $path: $!\n";
    while (length $data) {
        my $wrote = syswrite $file, $data;
        die "cannot write $path: $!\n" unless defined $wrote;
        substr($data, 0, $wrote) = '';
    }
    close $file;
}

sub start_time {
    # field 22 of /proc/PID/stat, and whether it is a zombie: what tells one process from
    # a later one with its pid
    my ($pid) = @_;
    open(my $stat, '<', "/proc/$pid/stat") or return;
    my $line = <$stat>;
    return unless defined $line && $line =~ /\)\s+(\S)\s+(.*)\z/s;
    my ($state, @fields) = ($1, split ' ', $2);
    return ($fields[18], $state eq 'Z');
}

sub signal_gate {
    # only the process watch verified as the gate: its pid with the start time recorded
    # then (a pid reused since, or never this gate's, is left alone)
    my ($held, $signum) = @_;
    my ($started) = start_time($held->{pid});
    return unless defined $started && $started eq $held->{started};
    if (defined $held->{pidfd}) {
        syscall(SYS_PIDFD_SEND_SIGNAL, $held->{pidfd}, $signum, 0, 0);
        return;
    }
    kill $signum, $held->{pid};
}

sub runs_our_gate {
    # whether PID (started at STARTED) runs this helper's gate script: a pid tmux reports
    # from another pid namespace names some other process here, or none. tmux reports the
    # pane's pid as it forks: the exec of the gate may be a moment away
    my ($pid, $started) = @_;
    for (1 .. GATE_EXEC_POLLS) {
        open(my $cmdline, '<', "/proc/$pid/cmdline") or return 0;
        my $words = do { local $/; <$cmdline> };
        return 1 if defined $words && grep { $_ eq "$root/program_gate.pl" } split /\0/, $words;
        my ($now, $zombie) = start_time($pid);
        return 0 unless defined $now && !$zombie && $now eq $started;
        select(undef, undef, undef, POLL_SECONDS / 4);
    }
    return 0;
}

sub forget_handle {
    my ($handle) = @_;
    my $held = delete $handles{$handle} or return;
    POSIX::close($held->{fd}) if defined $held->{fd};
    POSIX::close($held->{pidfd}) if defined $held->{pidfd};
}

sub launch_problem {
    # what schemux.programs.launch checks, here: the start directory, and argv[0] as the
    # gate will look for it
    my ($directory, $program, $path) = @_;
    return 'notdir' unless -d $directory;
    return 'denied' unless -x _;
    return '' if $program eq '';
    if (index($program, '/') >= 0) {
        my $candidate = substr($program, 0, 1) eq '/' ? $program : "$directory/$program";
        return 'missing' unless -f $candidate;
        return 'noexec' unless -x _;
        return '';
    }
    for my $entry (split /:/, $path, -1) {
        my $candidate = ($entry eq '' ? '.' : $entry) . "/$program";
        return '' if -f $candidate && -x _;
    }
    return 'notfound';
}

# run_command's facts about a shell of a tmux server on this host (schemux.shell.facts),
# answered here rather than by a run-shell of the server's: first the server's pid and
# start time (epoch seconds, as tmux says them) must name a process of this helper's pid
# namespace that started then, or the pids asked about are not this namespace's.
my $clock_ticks = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
my $boot_time;

sub same_process {
    my ($pid, $epoch) = @_;
    return 0 unless $pid =~ /\A[0-9]{1,10}\z/ && $epoch =~ /\A[0-9]{1,20}\z/;
    unless (defined $boot_time) {
        open(my $stat, '<', '/proc/stat') or return 0;
        while (<$stat>) { if (/\Abtime ([0-9]+)/) { $boot_time = $1; last } }
        return 0 unless defined $boot_time;
    }
    my ($started) = start_time($pid);
    return 0 unless defined $started;
    return abs($boot_time + $started / $clock_ticks - $epoch) <= 2;
}

sub terminal_modes {
    # ICANON and ECHO of terminal PATH (only /dev/pts/N): ('1'|'0'|'-') each
    my ($path) = @_;
    return ('-', '-') unless $path =~ m{\A/dev/pts/[0-9]{1,9}\z};
    my $fd = POSIX::open($path, O_RDONLY | O_NONBLOCK | POSIX::O_NOCTTY());
    return ('-', '-') unless defined $fd;
    my $termios = POSIX::Termios->new;
    my $read = $termios->getattr($fd);
    POSIX::close($fd);
    return ('-', '-') unless defined $read;
    my $flags = $termios->getlflag;
    return (($flags & POSIX::ICANON()) ? '1' : '0', ($flags & POSIX::ECHO()) ? '1' : '0');
}

sub first_line {
    open(my $file, '<', $_[0]) or return;
    my $line = <$file>;
    return unless defined $line;
    chomp $line;
    return $line;
}

sub controlling_terminal {
    # the path of the pseudo-terminal whose device number /proc/PID/stat's tty_nr is
    # ('-' for none or another kind, as _FACTS_SCRIPT says): not the shell's descriptor
    # 0, which a builtin's redirection (`read <FILE`) points elsewhere for a while
    my ($number) = @_;
    my $major = ($number >> 8) & 0xfff;
    my $minor = ($number & 0xff) | (($number >> 12) & 0xfff00);
    return '-' unless $major >= 136 && $major <= 143;
    return '/dev/pts/' . (($major - 136) * 256 + $minor);
}

sub shell_facts {
    # the line schemux.shell.facts's _FACTS_SCRIPT prints, for PID: "-" when no such process
    my ($pid, $editors) = @_;
    my $line = first_line("/proc/$pid/stat");
    return '-' unless defined $line && $line =~ /\)\s+(.*)\z/s;
    my @fields = split ' ', $1;    # from the state on: 0 state, 2 pgrp, 4 tty_nr, 5 tpgid
    my ($state, $pgrp, $tpgid) = @fields[0, 2, 5];
    my ($leader, $canonical, $echo, $tty) = ('none', '-', '-', '-');
    if ($tpgid > 0 && $tpgid != $pgrp) {
        my $argv = first_line("/proc/$tpgid/cmdline");
        $leader = !defined $argv || $argv eq '' ? 'gone' : $argv =~ /schemux_r_/ ? 'wrapper' : 'other';
    }
    my $job = 0;    # a child of the shell in its process group
    for my $child (split ' ', first_line("/proc/$pid/task/$pid/children") // '') {
        my $child_stat = first_line("/proc/$child/stat");
        $job = 1 if defined $child_stat && $child_stat =~ /.*\)\s+\S+\s+\S+\s+(\S+)/s && $1 == $pgrp;
    }
    my $name = first_line("/proc/$pid/comm");
    $name = '' unless defined $name;
    if (grep { $_ eq $name } split /\|/, $editors) {
        $tty = controlling_terminal($fields[4]);
        ($canonical, $echo) = terminal_modes($tty);
    }
    return "$state $pgrp $tpgid $leader $canonical $echo $job $tty\t$name";
}

# the pipes a shell's run_command wrapper reports through (schemux.shell.reported), by
# the shell's pid: the shell writes "TOKEN STATUS" to one (opened through
# /proc/HELPER/fd/N, no process started), sent on as ("report", PID, LINE), and reads a
# line from the other, which holds it until schemux answers (or this helper ends: then
# it reads the end of the pipe)
my %reports;

sub drop_report {
    my $channel = delete $reports{$_[0]} or return;
    POSIX::close($_) for @{$channel}{qw(from writes reads to)};
}

sub read_report {
    my ($pid) = @_;
    my $channel = $reports{$pid};
    my $got = POSIX::read($channel->{from}, my $chunk, READ_BYTES);
    return if !defined $got && ($! == POSIX::EAGAIN() || $! == POSIX::EINTR());
    return drop_report($pid) unless defined $got && $got > 0;
    $channel->{buffer} .= $chunk;
    while ($channel->{buffer} =~ s/\A([^\n]*)\n//) {
        send_frame('report', $pid, $1);
    }
}

my %shell_operations = (
    # report PID -> (HELPER_PID, FD_IT_WRITES, FD_IT_READS): made at a shell's first call,
    # refused for a shell in another pid namespace (its /proc/HELPER would not be this one)
    report => sub {
        my ($pid) = @_;
        die "bad pid\n" unless $pid =~ /\A[1-9][0-9]{0,9}\z/;
        my ($ours, $its) = (readlink('/proc/self/ns/pid'), readlink("/proc/$pid/ns/pid"));
        die "not a shell of this pid namespace\n" unless defined $ours && defined $its && $ours eq $its;
        unless ($reports{$pid}) {
            for my $gone (grep { !-e "/proc/$_" } keys %reports) {    # shells gone: told
                drop_report($gone);
                send_frame('unreport', $gone);
            }
            my ($from, $writes) = POSIX::pipe() or die "no pipe: $!\n";
            my ($reads, $to) = POSIX::pipe() or die "no pipe: $!\n";
            $reports{$pid} = { from => $from, writes => $writes, reads => $reads, to => $to, buffer => '' };
        }
        return ($$, @{$reports{$pid}}{qw(writes reads)});
    },
    # answer PID TOKEN: the shell that reported TOKEN goes on (it passes over others)
    answer => sub {
        my ($pid, $token) = @_;
        my $channel = $reports{$pid} or return;
        die "bad token\n" unless $token =~ /\A[0-9a-f]{1,64}\z/;
        POSIX::write($channel->{to}, "$token\n", length($token) + 1);
        return;
    },
    # facts SERVER_PID SERVER_START PID EDITORS -> ("mismatch") or (LINE)
    facts => sub {
        my ($server, $epoch, $pid, $editors) = @_;
        return 'mismatch' unless same_process($server, $epoch);
        die "bad pid\n" unless $pid =~ /\A[0-9]{1,10}\z/;
        return ('same', shell_facts($pid, $editors));
    },
    # echo SERVER_PID SERVER_START TTY -> ("mismatch") or ("same", 1|0|-)
    echo => sub {
        my ($server, $epoch, $tty) = @_;
        return 'mismatch' unless same_process($server, $epoch);
        return ('same', (terminal_modes($tty))[1]);
    },
);

# the terminal barrier (schemux.shell.barrier) for a shell of a tmux server on this host,
# kept here rather than by a run-shell script of the server's (a dozen processes each
# time): a status query written to the shell's terminal, its input read and dropped up
# to tmux's answer, a byte at a time (so nothing after it is taken), line editing and
# echo off meanwhile; answered once tmux answered, or WITHIN seconds on (longer while
# the server is stopped, STOPPED_SECONDS_AT_MOST at most, and WITHIN again once it goes
# on), with no wait of this helper's meanwhile
sub STATUS_QUERY ()            { "\e[5n" }
sub STATUS_ANSWER ()           { "\e[0n" }
sub STOPPED_SECONDS_AT_MOST () { 120 }
sub STOPPED_POLL_SECONDS ()    { 0.25 }
my %barriers;    # the terminal's fd => what its barrier waits for

sub clock { return (POSIX::times())[0] / $clock_ticks }

sub stopped {
    my $line = first_line("/proc/$_[0]/stat");
    return defined $line && $line =~ /\)\s+[Tt]\s/;
}

sub begin_barrier {
    # answers SERVER_PID SERVER_START PID WITHIN -> ("mismatch"), or ("same", 1) once done
    my ($request, $server, $epoch, $pid, $within) = @_;
    return send_frame('ok', $request, 'mismatch') unless same_process($server, $epoch);
    die "bad pid\n" unless $pid =~ /\A[0-9]{1,10}\z/ && $within =~ /\A[0-9]{1,3}(?:\.[0-9]{1,3})?\z/;
    # the shell's terminal: its input, or (a wrapper holding it reads a pipe of this
    # helper's as its input: schemux.shell.reported) its error output
    my ($tty) = grep { defined && m{\A/dev/pts/[0-9]{1,9}\z} } map { readlink("/proc/$pid/fd/$_") } 0, 2;
    # no such terminal (the pane went): no wait
    return send_frame('ok', $request, 'same', '1') unless defined $tty && $tty =~ m{\A/dev/pts/[0-9]{1,9}\z};
    my $fd = POSIX::open($tty, O_RDWR | O_NONBLOCK | POSIX::O_NOCTTY());
    return send_frame('ok', $request, 'same', '1') unless defined $fd;
    my ($saved, $modes) = (POSIX::Termios->new, POSIX::Termios->new);
    unless (defined $saved->getattr($fd) && defined $modes->getattr($fd)) {
        POSIX::close($fd);
        return send_frame('ok', $request, 'same', '1');
    }
    $modes->setlflag($modes->getlflag & ~(POSIX::ICANON() | POSIX::ECHO()));
    $modes->setcc(POSIX::VMIN(), 1);
    $modes->setcc(POSIX::VTIME(), 0);
    my $now = clock();
    $barriers{$fd} = {
        request => $request, saved => $saved, server => $server, within => $within,
        deadline => $now + $within, limit => $now + STOPPED_SECONDS_AT_MOST, last => '',
    };
    end_barrier($fd) unless defined $modes->setattr($fd, POSIX::TCSANOW())
        && POSIX::write($fd, STATUS_QUERY, length STATUS_QUERY);
}

sub end_barrier {
    my ($fd) = @_;
    my $barrier = delete $barriers{$fd};
    $barrier->{saved}->setattr($fd, POSIX::TCSANOW());
    POSIX::close($fd);
    send_frame('ok', $barrier->{request}, 'same', '1');
}

sub read_barrier {
    my ($fd) = @_;
    my $barrier = $barriers{$fd};
    while (1) {
        my $got = POSIX::read($fd, my $byte, 1);
        return if !defined $got && ($! == POSIX::EAGAIN() || $! == POSIX::EINTR());
        return end_barrier($fd) unless $got;    # the pane went
        $barrier->{last} = substr($barrier->{last} . $byte, -length STATUS_ANSWER);
        return end_barrier($fd) if $barrier->{last} eq STATUS_ANSWER;
    }
}

sub time_barriers {
    # each barrier past its time ends, unless its server is stopped (then it is looked
    # at again shortly, and given WITHIN once more when the server goes on); returns the
    # seconds until the next such time, or undef when no barrier waits
    my $now = clock();
    my $next;
    for my $fd (keys %barriers) {
        my $barrier = $barriers{$fd};
        if ($now >= $barrier->{deadline}) {
            if ($now < $barrier->{limit} && stopped($barrier->{server})) {
                $barrier->{stopped} = 1;
                $barrier->{deadline} = $now + STOPPED_POLL_SECONDS;
            } elsif ($barrier->{stopped} && $now < $barrier->{limit}) {
                $barrier->{stopped} = 0;
                $barrier->{deadline} = $now + $barrier->{within};
            } else {
                end_barrier($fd);
                next;
            }
        }
        my $left = $barrier->{deadline} - $now;
        $next = $left if !defined $next || $left < $next;
    }
    return $next;
}

my %operations = (
    prepare => sub {
        my ($id, $handle, $has_stdin, $stdin, $stderr) = @_;
        my $directory = program_directory($id);
        mkdir($directory, 0700) or die "cannot make $directory: $!\n";
        for my $fifo ('copy', 'secret') {
            POSIX::mkfifo("$directory/$fifo", 0600) or die "cannot make a FIFO: $!\n";
        }
        write_file("$directory/stdin", $stdin) if $has_stdin;
        if ($stderr) {
            write_file("$directory/stderr", '');
            open(my $file, '<', "$directory/stderr") or die "cannot open its stderr: $!\n";
            binmode $file;
            $stderrs{$id} = $file;
        }
        # not blocking: no writer yet. Linux reports the FIFO readable only once a writer
        # has come (with bytes, or gone again), so the end is seen as the copy's end
        my $copy = POSIX::open("$directory/copy", O_RDONLY | O_NONBLOCK);
        defined $copy or die "cannot open the copy FIFO: $!\n";
        my $secret = POSIX::open("$directory/secret", O_RDWR | O_NONBLOCK);
        defined $secret or die "cannot open the secret FIFO: $!\n";
        $copies{$id} = $copy;
        $handles{$handle} = { fd => $secret, copy => "$directory/copy" };
        return;
    },
    secret => sub {
        my ($handle, $table) = @_;
        my $held = $handles{$handle};
        die "no such FIFO\n" unless $held && defined $held->{fd};
        # with its table the gate runs the program: only once the copy's writer has the
        # copy FIFO open and has removed its name, so that no program can open it by name
        # and write as this one
        for (1 .. COPY_OPEN_POLLS) {
            last unless -e $held->{copy};
            select(undef, undef, undef, POLL_SECONDS / 4);
        }
        die "the copy did not start\n" if -e $held->{copy};
        my $wrote = POSIX::write($held->{fd}, $table, length $table);
        die "cannot write the table\n" unless defined $wrote && $wrote == length $table;
        return;
    },
    watch => sub {
        # the gate waits for its table before it runs anything: at watch it is alive, and
        # runs this helper's gate script. A pid that is not that names no gate here
        my ($handle, $pid) = @_;
        die "bad pid\n" unless $pid =~ /\A[1-9][0-9]{0,9}\z/;
        my ($started, $zombie) = start_time($pid);
        if (defined $started && $zombie) {    # its pane was closed already
            send_frame('exit', $handle);
            return;
        }
        die "unseen: pid $pid, as tmux reports it, is no gate of this helper's here\n"
            unless defined $started && runs_our_gate($pid, $started);
        my $pidfd = syscall(SYS_PIDFD_OPEN, 0 + $pid, 0);
        $handles{$handle} = { pid => 0 + $pid, $pidfd >= 0 ? (pidfd => $pidfd) : (), started => $started };
        my ($again) = start_time($pid);    # the pidfd is of the process verified above
        if (!defined $again || $again ne $started) {
            forget_handle($handle);
            send_frame('exit', $handle);
        }
        return;
    },
    signal => sub {
        my ($handle, $signum) = @_;
        my $held = $handles{$handle};
        signal_gate($held, 0 + $signum) if $held && $held->{pid};
        return;
    },
    close => sub {
        forget_handle($_[0]);
        return;
    },
    remove => sub {
        my ($id) = @_;
        my $directory = program_directory($id);
        my $copy = delete $copies{$id};
        POSIX::close($copy) if defined $copy;
        delete $stderrs{$id};
        File::Path::remove_tree($directory);
        return;
    },
    check => sub {
        return launch_problem(@_);
    },
    tail => sub {
        # the end of the program's stderr file: at most CEILING bytes and a line's worth
        my ($id, $ceiling) = @_;
        my $file = $stderrs{$id} or return ('', 0);
        my $size = -s $file;
        my $start = $size - $ceiling - 4096;
        $start = 0 if $start < 0;
        sysseek($file, $start, 0);
        my $data = '';
        1 while sysread($file, $data, READ_BYTES, length $data);
        return ($data, $start);
    },
);

sub serve {
    my ($operation, $request, @fields) = @_;
    if ($operation eq 'answers' && $request) {    # answered when its wait ends
        eval { begin_barrier($request, @fields) };
        if ($@) {
            (my $reason = $@) =~ s/\s+\z//;
            send_frame('err', $request, $reason);
        }
        return;
    }
    my $code = $operations{$operation} || $shell_operations{$operation};
    my @result = eval { $code ? $code->(@fields) : die "unknown operation\n" };
    return unless $request;
    if ($@) {
        (my $reason = $@) =~ s/\s+\z//;
        send_frame('err', $request, $reason);
    } else {
        send_frame('ok', $request, @result);
    }
}

sub take_frames {
    my ($buffer) = @_;
    while (length $$buffer >= 4) {
        my $length = unpack 'N', $$buffer;
        last if length $$buffer < 4 + $length;
        my $body = substr($$buffer, 4, $length);
        substr($$buffer, 0, 4 + $length) = '';
        my @fields;
        while (length $body >= 4) {
            my $size = unpack 'N', $body;
            push @fields, substr($body, 4, $size);
            substr($body, 0, 4 + $size) = '';
        }
        serve(@fields);
    }
}

# programs' default start directory: the one this helper started in, as over ssh (a
# login's home), unless it cannot be entered here (a prefix such as runuser passes on
# schemux's own, which may be a directory private to schemux's user): then the home, as
# a login's would be, or the root
my ($start) = grep { defined && -d && -x _ } POSIX::getcwd(), $ENV{HOME};
send_frame('ready', $root, (POSIX::uname())[4], $^X, $ENV{PATH}, $start // '/');

my $input = '';
while (1) {
    # what is watched now: a frame served below may close one fd and open another with
    # its number, which must not take the old one's readiness
    my %watched_copies = %copies;
    my %watched_gates = map { $_ => $handles{$_} } grep { $handles{$_}{pid} } keys %handles;
    my $bits = '';
    vec($bits, 0, 1) = 1;
    vec($bits, $_, 1) = 1 for values %watched_copies;
    my $polled = 0;
    for my $held (values %watched_gates) {
        if (defined $held->{pidfd}) {
            vec($bits, $held->{pidfd}, 1) = 1;
        } else {
            $polled = 1;
        }
    }
    my %watched_reports = map { $_ => $reports{$_}{from} } keys %reports;
    vec($bits, $_, 1) = 1 for values %watched_reports;
    my $timeout = time_barriers();    # first: it may end some
    my %watched_barriers = map { $_ => $barriers{$_} } keys %barriers;
    vec($bits, $_, 1) = 1 for keys %watched_barriers;
    $timeout = POLL_SECONDS if $polled && (!defined $timeout || $timeout > POLL_SECONDS);
    my $ready = select(my $readable = $bits, undef, undef, $timeout);
    next if $ready < 0;
    for my $fd (keys %watched_barriers) {
        next unless defined $barriers{$fd} && $barriers{$fd} == $watched_barriers{$fd};
        read_barrier($fd) if vec($readable, $fd, 1);
    }
    if (vec($readable, 0, 1)) {
        # POSIX::read says "0 but true" at the end: compared as a number
        my $got = POSIX::read(0, my $chunk, READ_BYTES);
        if (!defined $got) {
            finish() unless $! == POSIX::EINTR() || $! == POSIX::EAGAIN();
        } elsif ($got == 0) {
            finish();    # schemux is gone: end what it left, remove the directory
        } else {
            $input .= $chunk;
        }
        take_frames(\$input);
    }
    for my $pid (keys %watched_reports) {
        my $fd = $watched_reports{$pid};
        read_report($pid) if $reports{$pid} && $reports{$pid}{from} == $fd && vec($readable, $fd, 1);
    }
    for my $id (keys %watched_copies) {
        my $fd = $watched_copies{$id};
        next unless defined $copies{$id} && $copies{$id} == $fd && vec($readable, $fd, 1);
        my $got = POSIX::read($fd, my $chunk, READ_BYTES);
        next if !defined $got && ($! == POSIX::EAGAIN() || $! == POSIX::EINTR());
        if (defined $got && $got > 0) {
            send_frame('data', $id, $chunk);
        } else {
            POSIX::close($fd);
            delete $copies{$id};
            send_frame('eof', $id);
        }
    }
    for my $handle (keys %watched_gates) {
        my $held = $watched_gates{$handle};
        next unless defined $handles{$handle} && $handles{$handle} == $held;
        my $gone;
        if (defined $held->{pidfd}) {
            $gone = vec($readable, $held->{pidfd}, 1);
        } else {
            my ($started, $zombie) = start_time($held->{pid});
            $gone = !defined $started || $zombie || $started ne $held->{started};
        }
        next unless $gone;
        forget_handle($handle);
        send_frame('exit', $handle);
    }
}
