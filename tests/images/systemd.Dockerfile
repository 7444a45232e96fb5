# A bare Debian server for Molecule: systemd as PID 1 and python3 for Ansible.
ARG BASE
FROM ${BASE}
ENV container=docker
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      systemd systemd-sysv dbus python3 python3-apt ca-certificates procps iproute2 \
 && rm -rf /var/lib/apt/lists/* \
 && systemctl mask getty@.service getty.target systemd-modules-load.service \
      systemd-remount-fs.service systemd-logind.service console-getty.service \
 && systemctl set-default multi-user.target
STOPSIGNAL SIGRTMIN+3
VOLUME ["/var/lib/docker"]
CMD ["/sbin/init"]
