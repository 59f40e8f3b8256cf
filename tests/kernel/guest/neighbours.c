// SPDX-License-Identifier: GPL-2.0
/*
 * The broader workload of the main job's VARIANTS=broad: system calls
 * next to the untrained benchmarks' (bench/guest/untrained.txt), sharing
 * their kernel code (wakeups, polling, sockets, the IP stack, hrtimers,
 * signal queues, pipes) without entering them, which
 * scripts/untrained-check confirms on its profile: poll() where they use
 * epoll, datagram sockets and UDP where they use streams and TCP, POSIX
 * timers where they use timerfd, sigtimedwait() where they use a
 * signalfd, vmsplice() where they use splice(), eventfd.
 *
 * Usage: neighbours ROUNDS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void must(int ok, const char *what)
{
	if (!ok) {
		perror(what);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 10000;
	struct sockaddr_in udp = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t length = sizeof(udp);
	int pipe_fds[2], dgram[2], udp_fd, event_fd;
	struct sigevent none = { .sigev_notify = SIGEV_NONE };
	timer_t timer;
	sigset_t set;
	char c = 'x', buf[64];

	must(!pipe(pipe_fds), "pipe");
	must(!socketpair(AF_UNIX, SOCK_DGRAM, 0, dgram), "socketpair");
	udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	must(udp_fd >= 0 && !bind(udp_fd, (struct sockaddr *)&udp, sizeof(udp)) &&
	     !getsockname(udp_fd, (struct sockaddr *)&udp, &length), "udp socket");
	event_fd = eventfd(0, 0);
	must(event_fd >= 0, "eventfd");
	must(!timer_create(CLOCK_MONOTONIC, &none, &timer), "timer_create");
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	must(!sigprocmask(SIG_BLOCK, &set, NULL), "sigprocmask");

	for (long i = 0; i < rounds; i++) {
		struct pollfd ready = { .fd = pipe_fds[0], .events = POLLIN };
		struct itimerspec when = { .it_value = { .tv_sec = 1 } }, left, off = { 0 };
		struct iovec iov = { .iov_base = &c, .iov_len = 1 };
		struct timespec zero = { 0 };
		uint64_t one = 1;

		must(write(pipe_fds[1], &c, 1) == 1 && poll(&ready, 1, -1) == 1 &&
		     read(pipe_fds[0], &c, 1) == 1, "poll on a pipe");
		must(send(dgram[0], &c, 1, 0) == 1 && recv(dgram[1], buf, sizeof(buf), 0) == 1,
		     "AF_UNIX datagram");
		must(sendto(udp_fd, &c, 1, 0, (struct sockaddr *)&udp, sizeof(udp)) == 1 &&
		     recv(udp_fd, buf, sizeof(buf), 0) == 1, "UDP loopback");
		must(!timer_settime(timer, 0, &when, NULL) && !timer_gettime(timer, &left) &&
		     !timer_settime(timer, 0, &off, NULL), "POSIX timer");
		must(!syscall(SYS_tgkill, getpid(), gettid(), SIGUSR2) &&
		     sigtimedwait(&set, NULL, &zero) == SIGUSR2, "sigtimedwait");
		must(vmsplice(pipe_fds[1], &iov, 1, 0) == 1 && read(pipe_fds[0], &c, 1) == 1,
		     "vmsplice");
		must(write(event_fd, &one, sizeof(one)) == sizeof(one) &&
		     read(event_fd, &one, sizeof(one)) == sizeof(one), "eventfd");
	}
	return 0;
}
