package io.floe.iceberg;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.iceberg.arrow.vectorized.VectorHolder;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.schema.PrimitiveType;

/**
 * Turns a column as Iceberg's vectorized Parquet reader hands it out into a vector of the served
 * Arrow type, moving buffers rather than values wherever the layouts agree:
 *
 * <ul>
 *   <li>the same type: the buffers are transferred;
 *   <li>the same layout under another type (Parquet's int64 for a timestamp, binary for a string):
 *       the buffers are reused as the served vector's;
 *   <li>dictionary-encoded pages (ids and a Parquet dictionary): the values are decoded;
 *   <li>decimals stored as int32, int64 or fixed bytes, and widened ints and floats (schema
 *       evolution): converted value by value;
 *   <li>a column the file does not have: all nulls.
 * </ul>
 *
 * Anything else is refused with {@link UnsupportedOperationException}, and the task goes to the
 * generic reader.
 */
final class VectorColumns {
  private VectorColumns() {}

  /**
   * The decoded values of Parquet dictionaries, by dictionary, so that a dictionary-encoded column
   * is decoded once per row group rather than once per row. One per read.
   */
  static final class Dictionaries {
    private final java.util.IdentityHashMap<Dictionary, byte[][]> bytes =
        new java.util.IdentityHashMap<>();

    byte[] bytes(Dictionary dictionary, int id) {
      byte[][] values = bytes.computeIfAbsent(dictionary, d -> new byte[d.getMaxId() + 1][]);
      byte[] value = values[id];
      if (value == null) {
        value = dictionary.decodeToBinary(id).getBytes();
        values[id] = value;
      }
      return value;
    }
  }

  static FieldVector toServed(
      VectorHolder holder,
      Field served,
      int rows,
      BufferAllocator allocator,
      Dictionaries dictionaries) {
    FieldVector source = holder.vector();
    if (source == null) {
      if (!holder.isDummy() || holder instanceof VectorHolder.ConstantVectorHolder<?>) {
        throw new UnsupportedOperationException("constant column " + served.getName());
      }
      return nulls(served, rows, allocator);
    }
    if (holder.isDictionaryEncoded()) {
      return decode(holder, served, rows, allocator, dictionaries);
    }
    ArrowType type = served.getType();
    if (source.getField().getType().equals(type)) {
      TransferPair transfer = source.getTransferPair(allocator);
      transfer.transfer();
      return (FieldVector) transfer.getTo();
    }
    if (sameLayout(source, type)) {
      FieldVector target = served.createVector(allocator);
      List<org.apache.arrow.memory.ArrowBuf> buffers = source.getFieldBuffers();
      target.loadFieldBuffers(new ArrowFieldNode(rows, source.getNullCount()), buffers);
      return target;
    }
    return convert(source, served, rows, allocator);
  }

  /** Whether the served vector can take the source's buffers as they are. */
  private static boolean sameLayout(FieldVector source, ArrowType type) {
    if (source instanceof BaseVariableWidthVector) {
      return type instanceof ArrowType.Utf8 || type instanceof ArrowType.Binary;
    }
    if (!(source instanceof BaseFixedWidthVector fixed)
        || source instanceof DecimalVector
        || source instanceof BitVector
        || type instanceof ArrowType.Decimal
        || type instanceof ArrowType.Bool) {
      return false;
    }
    boolean sourceFloat = source.getField().getType() instanceof ArrowType.FloatingPoint;
    boolean targetFloat = type instanceof ArrowType.FloatingPoint;
    int width = widthOf(type);
    return width > 0 && width == fixed.getTypeWidth() && sourceFloat == targetFloat;
  }

  /** Bytes per value of a fixed-width served type, or -1. */
  private static int widthOf(ArrowType type) {
    if (type instanceof ArrowType.Int i) {
      return i.getBitWidth() / 8;
    } else if (type instanceof ArrowType.FloatingPoint f) {
      return f.getPrecision() == org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE
          ? 4
          : 8;
    } else if (type instanceof ArrowType.Date d) {
      return d.getUnit() == org.apache.arrow.vector.types.DateUnit.DAY ? 4 : 8;
    } else if (type instanceof ArrowType.Time t) {
      return t.getBitWidth() / 8;
    } else if (type instanceof ArrowType.Timestamp) {
      return 8;
    } else if (type instanceof ArrowType.FixedSizeBinary b) {
      return b.getByteWidth();
    }
    return -1;
  }

  private static FieldVector nulls(Field served, int rows, BufferAllocator allocator) {
    FieldVector target = served.createVector(allocator);
    target.setInitialCapacity(rows);
    target.allocateNew();
    target.setValueCount(rows); // validity is zero: every value null
    return target;
  }

  /**
   * Decodes dictionary ids with the column's Parquet dictionary, by the column's physical type:
   * bytes for strings, binaries, fixed values and decimals stored as bytes; ints and longs for
   * numbers, dates, times, timestamps and decimals stored as them.
   */
  private static FieldVector decode(
      VectorHolder holder,
      Field served,
      int rows,
      BufferAllocator allocator,
      Dictionaries dictionaries) {
    IntVector ids = (IntVector) holder.vector();
    Dictionary dictionary = holder.dictionary();
    PrimitiveType.PrimitiveTypeName physical =
        holder.descriptor().getPrimitiveType().getPrimitiveTypeName();
    FieldVector target = served.createVector(allocator);
    try {
      target.setInitialCapacity(rows);
      target.allocateNew();
      for (int i = 0; i < rows; i++) {
        if (!ids.isNull(i)) {
          decodeOne(dictionary, dictionaries, ids.get(i), physical, target, i, served);
        }
      }
      target.setValueCount(rows);
      return target;
    } catch (RuntimeException | Error e) {
      target.close();
      throw e;
    }
  }

  private static void decodeOne(
      Dictionary dictionary,
      Dictionaries dictionaries,
      int id,
      PrimitiveType.PrimitiveTypeName physical,
      FieldVector target,
      int i,
      Field served) {
    switch (physical) {
      case BINARY:
      case FIXED_LEN_BYTE_ARRAY:
        byte[] value = dictionaries.bytes(dictionary, id);
        if (target instanceof BaseVariableWidthVector variable) {
          variable.setSafe(i, value);
        } else if (target instanceof FixedSizeBinaryVector fixed) {
          fixed.set(i, value);
        } else if (target instanceof DecimalVector decimal) {
          decimal.setBigEndian(i, value);
        } else {
          throw unsupported("dictionary-encoded " + physical, served);
        }
        return;
      case INT32:
        setWhole(target, i, dictionary.decodeToInt(id), served);
        return;
      case INT64:
        setWhole(target, i, dictionary.decodeToLong(id), served);
        return;
      case FLOAT:
        if (target instanceof Float4Vector floats) {
          floats.set(i, dictionary.decodeToFloat(id));
        } else if (target instanceof Float8Vector doubles) {
          doubles.set(i, dictionary.decodeToFloat(id));
        } else {
          throw unsupported("dictionary-encoded float", served);
        }
        return;
      case DOUBLE:
        if (target instanceof Float8Vector doubles) {
          doubles.set(i, dictionary.decodeToDouble(id));
        } else {
          throw unsupported("dictionary-encoded double", served);
        }
        return;
      default:
        throw unsupported("dictionary-encoded " + physical, served);
    }
  }

  /** A whole number into a decimal (unscaled), or a 4- or 8-byte fixed-width vector. */
  private static void setWhole(FieldVector target, int i, long value, Field served) {
    if (target instanceof DecimalVector decimal) {
      decimal.set(i, value);
    } else if (target instanceof BaseFixedWidthVector fixed
        && !(target instanceof Float4Vector)
        && !(target instanceof Float8Vector)
        && (fixed.getTypeWidth() == 4 || fixed.getTypeWidth() == 8)) {
      if (fixed.getTypeWidth() == 4) {
        fixed.getDataBuffer().setInt(4L * i, (int) value);
      } else {
        fixed.getDataBuffer().setLong(8L * i, value);
      }
      fixed.setIndexDefined(i);
    } else {
      throw unsupported("dictionary-encoded whole number", served);
    }
  }

  /** Value-by-value conversions: decimals from their storage, and widened ints and floats. */
  private static FieldVector convert(
      FieldVector source, Field served, int rows, BufferAllocator allocator) {
    FieldVector target = served.createVector(allocator);
    try {
      target.setInitialCapacity(rows);
      target.allocateNew();
      if (target instanceof DecimalVector decimal) {
        for (int i = 0; i < rows; i++) {
          if (source.isNull(i)) {
            continue;
          }
          if (source instanceof IntVector ints) {
            decimal.set(i, ints.get(i));
          } else if (source instanceof BigIntVector longs) {
            decimal.set(i, longs.get(i));
          } else if (source instanceof FixedSizeBinaryVector bytes) {
            decimal.setBigEndian(i, bytes.get(i));
          } else {
            throw unsupported(source.getField().getType().toString(), served);
          }
        }
      } else if (target instanceof BigIntVector longs && source instanceof IntVector ints) {
        for (int i = 0; i < rows; i++) {
          if (!ints.isNull(i)) {
            longs.set(i, ints.get(i));
          }
        }
      } else if (target instanceof Float8Vector doubles && source instanceof Float4Vector floats) {
        for (int i = 0; i < rows; i++) {
          if (!floats.isNull(i)) {
            doubles.set(i, floats.get(i));
          }
        }
      } else {
        throw unsupported(source.getField().getType().toString(), served);
      }
      target.setValueCount(rows);
      return target;
    } catch (RuntimeException | Error e) {
      target.close();
      throw e;
    }
  }

  private static UnsupportedOperationException unsupported(String from, Field served) {
    return new UnsupportedOperationException(
        from + " as " + served.getType() + " for column " + served.getName());
  }
}
