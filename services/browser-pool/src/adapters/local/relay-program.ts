/**
 * The relay host (see `relayHost`): one Perl process beside browser-pool, root as it is, which forks a relay for each
 * caller's CDP connection into that browser's sandbox network. Perl, which every Debian system has (perl-base is
 * essential), because this has to do what no ready-made program does: take a connection from browser-pool after it
 * has started (`pidfd_getfd`), so that no process has to be started for a caller, and enter a network namespace
 * (`setns`) in a process that is already running.
 *
 * Reads on its standard input, from browser-pool:
 *   `relay <id> <caller fd> <caller address> <caller port> <network fd> <network dev:ino> <uid> <port> <length>\n`
 *   then <length> bytes of the upgrade request;
 *   `kill <id>\n`.
 * Writes on its standard output: `failed <id> <reason>\n` (before that relay's end), `ended <id> <code|signal>\n`.
 *
 * A relay copies the caller's connection and the browser's network from browser-pool and checks that they are what
 * browser-pool said (the caller's address and port, the namespace's inode), so that a descriptor closed and reused
 * meanwhile is never carried anywhere. Then it enters the network, becomes the browser's user (uid, gid and its only
 * group; capabilities go with uid 0) before it touches a byte of the caller's, connects to DevTools on the sandbox's
 * loopback, sends the request and copies bytes both ways until either side has closed (and the other has sent
 * nothing for half a second, or closed too). Relays end with the host (parent-death signal), the host when its
 * standard input closes: browser-pool has ended, and callers of a browser-pool that is gone are not carried on.
 */
export const RELAY_HOST_PROGRAM = String.raw`
use strict;
use Config;
use POSIX qw(WNOHANG);
use Socket qw(:addrinfo PF_INET SOCK_STREAM IPPROTO_TCP TCP_NODELAY pack_sockaddr_in inet_aton);

my %SYSCALL = (x86_64 => { setns => 308, prctl => 157 }, aarch64 => { setns => 268, prctl => 167 });
my ($arch) = $Config{archname} =~ /^(x86_64|aarch64)/ or die "relay host: no system call numbers for $Config{archname}\n";
my ($SETNS, $PRCTL) = @{$SYSCALL{$arch}}{qw(setns prctl)};
my ($PIDFD_OPEN, $PIDFD_GETFD, $CLONE_NEWNET, $PR_SET_PDEATHSIG) = (434, 438, 0x40000000, 1);

my $hostPid = $$;
my $pidfd = syscall($PIDFD_OPEN, getppid(), 0);
die "relay host: pidfd_open: $!\n" if $pidfd < 0;
$| = 1;
# A relay's end interrupts the wait below; the timeout catches one that ends just before it.
$SIG{CHLD} = sub {};

my (%pidOf, %idOf);
my $input = '';
while (1) {
  vec(my $readable = '', 0, 1) = 1;
  my $ready = select($readable, undef, undef, %pidOf ? 1 : undef);
  while ((my $pid = waitpid(-1, WNOHANG)) > 0) {
    my $id = delete $idOf{$pid};
    delete $pidOf{$id};
    my $how = $? & 127 ? 'signal ' . ($? & 127) : 'code ' . ($? >> 8);
    print "ended $id $how\n";
  }
  next unless $ready > 0;
  my $read = sysread(STDIN, $input, 65536, length $input);
  next if !defined $read && ($!{EINTR} || $!{EAGAIN});
  exit 0 unless $read;
  while ($input =~ /\A([^\n]*)\n/) {
    my @words = split / /, $1;
    my $headLength = length($1) + 1;
    if ($words[0] eq 'kill') {
      kill 'KILL', $pidOf{$words[1]} if $pidOf{$words[1]};
      substr($input, 0, $headLength, '');
    } elsif ($words[0] eq 'relay' && @words == 10) {
      last if length($input) < $headLength + $words[9];
      my $request = substr($input, $headLength, $words[9]);
      substr($input, 0, $headLength + $words[9], '');
      start(@words[1 .. 8], $request);
    } else {
      die "relay host: unreadable command\n";
    }
  }
}

sub start {
  my ($id, $callerFd, $address, $callerPort, $networkFd, $networkIno, $uid, $port, $request) = @_;
  my $caller = descriptor($callerFd, '+<&=');
  my $network = descriptor($networkFd, '<&=');
  my $pid = fork();
  if (!defined $pid) {
    print "failed $id fork: $!\n";
    print "ended $id code 1\n";
  } elsif ($pid == 0) {
    eval { carry($caller, $address, $callerPort, $network, $networkIno, $uid, $port, $request) };
    print "failed $id $@" if $@;
    POSIX::_exit($@ ? 1 : 0);
  } else {
    $pidOf{$id} = $pid;
    $idOf{$pid} = $id;
  }
  close($caller) if $caller;
  close($network) if $network;
}

# browser-pool's descriptor, copied here; undef when it is gone (the relay then fails at its check).
sub descriptor {
  my ($fd, $mode) = @_;
  my $copy = syscall($PIDFD_GETFD, $pidfd, $fd + 0, 0);
  return undef if $copy < 0;
  open(my $handle, $mode, $copy) or return undef;
  return $handle;
}

sub carry {
  my ($caller, $address, $callerPort, $network, $networkIno, $uid, $port, $request) = @_;
  close(STDIN);
  POSIX::close($pidfd);
  my ($error, $peer, $peerPort) = $caller && getpeername($caller)
    ? getnameinfo(getpeername($caller), NI_NUMERICHOST | NI_NUMERICSERV) : ('gone');
  die "not the caller's connection\n" if $error || $peer ne $address || $peerPort ne $callerPort;
  my @stat = $network ? stat($network) : ();
  die "not the browser's network\n" unless @stat && "$stat[0]:$stat[1]" eq $networkIno;
  syscall($SETNS, fileno($network), $CLONE_NEWNET) == 0 or die "setns: $!\n";
  close($network);

  $) = "$uid $uid";
  $( = $uid;
  $< = $> = $uid;
  die "still privileged\n" if $< == 0 || $> == 0 || $( == 0 || $) == 0;
  syscall($PRCTL, $PR_SET_PDEATHSIG, 9) == 0 or die "prctl: $!\n";
  return if getppid() != $hostPid;

  socket(my $browser, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
  connect($browser, pack_sockaddr_in($port, inet_aton('127.0.0.1'))) or die "DevTools: $!\n";
  setsockopt($browser, IPPROTO_TCP, TCP_NODELAY, 1);
  send_all($browser, $request) or die "DevTools: $!\n";

  my %to = (fileno($caller) => $browser, fileno($browser) => $caller);
  my $watched = '';
  vec($watched, fileno($_), 1) = 1 for $caller, $browser;
  my $closing;
  while (1) {
    my $ready = select(my $readable = $watched, undef, undef, $closing ? 0.5 : undef);
    next if $ready < 0 && $!{EINTR};
    return if $ready == 0;
    for my $from ($caller, $browser) {
      next unless vec($readable, fileno($from), 1);
      my $read = sysread($from, my $bytes, 262144);
      next if !defined $read && $!{EAGAIN};
      my $to = $to{fileno($from)};
      if (!$read) {
        return if $closing;
        shutdown($to, 1);
        vec($watched, fileno($from), 1) = 0;
        $closing = 1;
        next;
      }
      send_all($to, $bytes) or return;
    }
  }
}

# The caller's connection is non-blocking (it is browser-pool's too): a full buffer waits until it can take more.
sub send_all {
  my ($socket, $bytes) = @_;
  while (length $bytes) {
    my $sent = syswrite($socket, $bytes);
    if (defined $sent) {
      substr($bytes, 0, $sent, '');
    } elsif ($!{EAGAIN}) {
      vec(my $writable = '', fileno($socket), 1) = 1;
      select(undef, $writable, undef, undef);
    } elsif (!$!{EINTR}) {
      return 0;
    }
  }
  return 1;
}
`;
