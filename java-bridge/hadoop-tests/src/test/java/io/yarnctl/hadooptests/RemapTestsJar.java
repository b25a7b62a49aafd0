package io.yarnctl.hadooptests;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.commons.ClassRemapper;
import org.objectweb.asm.commons.Remapper;

/**
 * Extracts Hadoop's ResourceManager test jar into the test-classes directory, rewriting every reference
 * to the one class {@code ...scheduler.fifo.FifoScheduler} into {@code io.yarnctl.shim.YarnctlScheduler}
 * in {@code shim} mode (class literals, new, casts, field and method owners, descriptors, signatures,
 * super classes, and string constants equal to the dotted class name) and copying it unchanged in
 * {@code stock} mode. Nothing else is renamed: not FifoScheduler$1, not TestFifoScheduler, not
 * FifoSchedulerInfo.
 *
 * With {@code --suite=capacity} the one class is {@code ...scheduler.capacity.CapacityScheduler}, rewritten to
 * {@code io.yarnctl.shim.YarnctlCapacityScheduler} (CapacityScheduler$N untouched).
 *
 * <p>Arguments: {@code <stock|shim> <output dir> [--keep=resource ...] [--shim-classes=dir] [--suite=fifo|capacity]}. The jar is the jar on
 * this program's class path that holds {@code org/apache/hadoop/yarn/server/resourcemanager/MockRM.class}
 * (exec:java runs it with the project's test class path). Class files are always (re)written, so
 * switching modes without {@code clean} is safe; the --keep resources (our yarn-site.xml) are never
 * written. In shim mode it fails at once unless --shim-classes holds YarnctlScheduler.class.
 */
public final class RemapTestsJar {

  static final String FROM = "org/apache/hadoop/yarn/server/resourcemanager/scheduler/fifo/FifoScheduler";
  static final String TO = "io/yarnctl/shim/YarnctlScheduler";
  // --suite=capacity: the CapacityScheduler classes' run, against the shim on CapacityScheduler
  static final String CS_FROM = "org/apache/hadoop/yarn/server/resourcemanager/scheduler/capacity/CapacityScheduler";
  static final String CS_TO = "io/yarnctl/shim/YarnctlCapacityScheduler";
  private static final String MARKER = "org/apache/hadoop/yarn/server/resourcemanager/MockRM.class";

  private RemapTestsJar() {
  }

  /** Maps exactly one internal name (and its dotted form in String constants) to another. */
  static final class OneClass extends Remapper {
    private final String from;
    private final String to;
    private final String fromDotted;
    private final String toDotted;
    int hits;

    OneClass(String from, String to) {
      this.from = from;
      this.to = to;
      this.fromDotted = from.replace('/', '.');
      this.toDotted = to.replace('/', '.');
    }

    @Override
    public String map(String internalName) {
      if (from.equals(internalName)) {
        hits++;
        return to;
      }
      return internalName;
    }

    @Override
    public Object mapValue(Object value) {
      if (fromDotted.equals(value)) {
        hits++;
        return toDotted;
      }
      if (from.equals(value)) {
        hits++;
        return to;
      }
      return super.mapValue(value);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2 || !(args[0].equals("stock") || args[0].equals("shim"))) {
      throw new IllegalArgumentException(
          "usage: RemapTestsJar <stock|shim> <output dir> [--keep=resource ...] [--shim-classes=dir]");
    }
    boolean shim = args[0].equals("shim");
    File out = new File(args[1]);
    Set<String> keep = new HashSet<>();
    File shimClasses = null;
    String from = FROM;
    String to = TO;
    for (String a : Arrays.asList(args).subList(2, args.length)) {
      if (a.startsWith("--keep=")) {
        keep.add(a.substring("--keep=".length()));
      } else if (a.equals("--suite=capacity")) {
        from = CS_FROM;
        to = CS_TO;
      } else if (a.equals("--suite=fifo")) {
        from = FROM;
        to = TO;
      } else if (a.startsWith("--shim-classes=")) {
        shimClasses = new File(a.substring("--shim-classes=".length()));
      } else {
        throw new IllegalArgumentException("unknown argument " + a);
      }
    }
    if (shim) {
      // fail before a long run rather than in every test
      File c = new File(shimClasses, to + ".class");
      if (shimClasses == null || !c.isFile()) {
        throw new IllegalStateException("shim mode runs the shim from " + shimClasses + " but " + c
            + " is missing: build it first (mvn -q -B -f java-bridge compile) or set -Dshim.classes=...");
      }
    }
    // the output directory is on this class path too (from an earlier run): take the jar's copy
    URL marker = null;
    for (URL u : Collections.list(RemapTestsJar.class.getClassLoader().getResources(MARKER))) {
      if ("jar".equals(u.getProtocol())) {
        marker = u;
        break;
      }
    }
    if (marker == null) {
      throw new IllegalStateException(MARKER + " not found in a jar on the class path");
    }
    File jar = new File(((JarURLConnection) marker.openConnection()).getJarFileURL().toURI());
    int classes = 0;
    int resources = 0;
    Set<String> remapped = new TreeSet<>();
    try (JarFile jf = new JarFile(jar)) {
      Enumeration<JarEntry> en = jf.entries();
      while (en.hasMoreElements()) {
        JarEntry e = en.nextElement();
        String name = e.getName();
        if (e.isDirectory() || name.startsWith("META-INF/")) {
          continue;
        }
        File target = new File(out, name);
        if (keep.contains(name)) {
          continue;
        }
        target.getParentFile().mkdirs();
        byte[] bytes;
        try (InputStream in = jf.getInputStream(e)) {
          bytes = readAll(in);
        }
        if (name.endsWith(".class")) {
          classes++;
          if (shim) {
            ClassReader cr = new ClassReader(bytes);
            // no COMPUTE_FRAMES: the existing frames are remapped as they are (no class loading needed)
            ClassWriter cw = new ClassWriter(0);
            OneClass m = new OneClass(from, to);
            cr.accept(new ClassRemapper(cw, m), 0);
            if (m.hits > 0) {
              bytes = cw.toByteArray();
              remapped.add(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
            }
          }
        } else {
          resources++;
        }
        File tmp = new File(target.getPath() + ".tmp");
        Files.write(tmp.toPath(), bytes);
        Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.REPLACE_EXISTING);
      }
    }
    System.out.println("[RemapTestsJar] mode=" + args[0] + " jar=" + jar + " -> " + out + ": " + classes
        + " classes, " + resources + " resources, kept " + keep + "; " + remapped.size()
        + " classes rewritten " + from.replace('/', '.') + " -> " + to.replace('/', '.'));
    for (String r : remapped) {
      System.out.println("[RemapTestsJar]   rewritten: " + r);
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream bo = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    int n;
    while ((n = in.read(buf)) > 0) {
      bo.write(buf, 0, n);
    }
    return bo.toByteArray();
  }
}
