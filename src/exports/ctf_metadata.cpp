// The CTF export's metadata (ctf.cpp): TSDL text, CTF 1.8 section 7. Kept beside docs/tools.md "CTF".
#include <fmt/core.h>

#include "exports/ctf.hpp"

namespace kron::exports::ctf {

// The metadata: trace, clock, one stream class, the event classes. Kept beside docs/tools.md "CTF".
std::string metadata(std::uint64_t clock_hz, std::int64_t offset_s, std::uint64_t offset_cycles,
                     const std::string& description, bool ranks) {
  std::string m = "/* CTF 1.8 */\n";
  m += R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
typealias integer { size = 64; align = 8; signed = true; } := int64_t;

trace {
	major = 1;
	minor = 8;
	byte_order = le;
	packet.header := struct {
		uint32_t magic;
		uint32_t stream_id;
	};
};

env {
	producer = "kron export";
)";
  m += fmt::format("\tdescription = \"{}\";\n}};\n\n", description);
  m += fmt::format(R"(clock {{
	name = kron;
	description = "the recording's timestamp clock";
	freq = {};
	offset_s = {};
	offset = {};
	precision = 1;
	absolute = false;
}};

typealias integer {{ size = 64; align = 8; signed = false; map = clock.kron.value; }} := uint64_clock_t;
)",
                   clock_hz, offset_s, offset_cycles);
  m += R"(
stream {
	id = 0;
	packet.context := struct {
		uint64_clock_t timestamp_begin;
		uint64_clock_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t events_discarded;
		uint32_t source;
		uint32_t lane;
		uint8_t by_thread;
)";
  // ERRATUM E395: CTF 1.8 names no stream; an MPI recording's streams carry their rank in the packet context.
  if (ranks) m += "\t\tint32_t rank;\n";
  m += R"(	};
	event.header := struct {
		uint16_t id;
		uint64_clock_t timestamp;
	};
};

event {
	name = "kron:trace";
	id = 0;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
	};
};

event {
	name = "kron:resource";
	id = 1;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
		uint64_t counters[16];
	};
};

event {
	name = "kron:named";
	id = 2;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t data;
		uint16_t cpu;
		uint8_t flags;
		uint8_t group;
		uint32_t thread;
		uint16_t phase;
		uint16_t name_id;
		int64_t value;
		string name;
	};
};

event {
	name = "kron:sched_switch";
	id = 3;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint32_t source;
		uint32_t thread;
		uint16_t cpu;
		uint8_t out;
		uint8_t preempted;
	};
};

event {
	name = "kron:mpi";
	id = 4;
	stream_id = 0;
	fields := struct {
		uint64_t ticks;
		uint64_t end;
		uint64_t bytes;
		uint32_t source;
		uint32_t thread;
		uint32_t rank;
		uint32_t comm;
		uint32_t comm_size;
		int32_t peer;
		int32_t tag;
		uint16_t call;
		uint16_t cpu;
		uint8_t flags;
		string call_name;
	};
};
)";
  return m;
}

}  // namespace kron::exports::ctf
