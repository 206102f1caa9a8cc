package emu.fidelity.sls;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What hadoop-sls 3.4's trace readers need to read traces as earlier
 * releases did (see emu.fidelity.sls_oracle, which patches the calls in).
 */
public final class SlsTraceJobs {
  private SlsTraceJobs() {
  }

  /**
   * The jobs of an SLS trace in the shape AMDefinitionSLS and
   * TaskContainerDefinition read: every scalar a String, "job.tasks" a list
   * of maps of Strings.
   *
   * <p>AMRunner.startAMFromSLSTrace in 3.4.x parses each job as a
   * Map&lt;String, String&gt;, which Jackson refuses for the "job.tasks"
   * array ("Cannot deserialize value of type String from Array value"), so
   * every job of every SLS trace is dropped with "Failed to create an AM"
   * and the run never ends. Before 3.4 it parsed a raw Map and called
   * toString() on the scalars; this gives the 3.4 code that same input.
   */
  public static Iterator<Map<String, String>> read(ObjectMapper mapper,
      JsonParser parser) throws IOException {
    Iterator<Map> raw = mapper.readValues(parser, Map.class);
    return new Iterator<Map<String, String>>() {
      @Override
      public boolean hasNext() {
        return raw.hasNext();
      }

      @Override
      @SuppressWarnings("unchecked")
      public Map<String, String> next() {
        return (Map<String, String>) strings(raw.next());
      }
    };
  }

  private static long synthBaseline = -1;

  /**
   * The submission time of the first SYNTH job, the zero of all of them.
   * AMDefinitionFactory.createFromSynth in 3.4.x passes a baseline of 0,
   * which AMDefinitionSynth.Builder reads as "none" and replaces by each
   * job's own submission time, so every job would start at time 0; before
   * 3.4 the first job's submission was the baseline.
   */
  public static synchronized long synthBaseline(long submission) {
    if (synthBaseline < 0) {
      synthBaseline = submission;
    }
    return synthBaseline;
  }

  private static Object strings(Object value) {
    if (value instanceof Map) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        out.put(String.valueOf(e.getKey()), strings(e.getValue()));
      }
      return out;
    }
    if (value instanceof List) {
      List<Object> out = new ArrayList<>();
      for (Object item : (List<?>) value) {
        out.add(strings(item));
      }
      return out;
    }
    return value == null ? null : value.toString();
  }
}
